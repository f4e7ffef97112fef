/**
 * Online backups of the SQLite store (docs/operations.md "Backups"): a consistent copy taken while paid load runs,
 * a check of a copy (integrity and the whole-books ledger check), a restore into a stopped data dir, and the
 * scheduled backups with retention the control process runs when SVC_BACKUP_DIR is set.
 *
 * The copy uses SQLite's backup API in ONE step: one read transaction over a WAL snapshot, so writers (the gateway's
 * group commits) never wait for it and it never restarts because they wrote. The copy is then switched to
 * `journal_mode=DELETE`, so a backup is one self-contained file.
 */
import Sqlite from '../../core/db/sqlite-driver.js';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, copyFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database, Db } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';
import { checkBooks, type BooksReport } from '../ledger/books.service.js';

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
  /** Wall time of the copy. */
  ms: number;
  /** The newest usage row in the copy (every call answered before the copy began is in it). */
  usage_rows: number;
}

/**
 * Takes a consistent online copy of the open database into `file` (which must not exist).
 * @internal The operator CLI and the scheduled backup job, on the marketplace's own machine.
 */
export async function createBackup(sqlite: Sqlite.Database, file: string): Promise<BackupResult> {
  if (existsSync(file)) throw new SvcError('conflict', `backup file ${file} already exists`);
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  const started = performance.now();
  let pages = 0;
  await sqlite.backup(partial, {
    // Every page in one step: one snapshot, never restarted by concurrent writers.
    progress: ({ totalPages }) => {
      pages = totalPages;
      return Math.max(totalPages, 1) * 2;
    },
  });
  const copy = new Sqlite(partial);
  let usageRows = 0;
  try {
    copy.pragma('journal_mode = DELETE');
    usageRows = (copy.prepare('SELECT count(*) AS n FROM usage_calls').get() as { n: number }).n;
  } finally {
    copy.close();
  }
  renameSync(partial, file);
  return {
    file,
    bytes: statSync(file).size,
    pages,
    ms: Math.round(performance.now() - started),
    usage_rows: usageRows,
  };
}

export interface BackupCheck {
  file: string;
  /** `PRAGMA integrity_check` said "ok". */
  integrity_ok: boolean;
  integrity_errors: string[];
  books: BooksReport | null;
  ok: boolean;
}

/**
 * Opens a backup read-only and checks it: SQLite's integrity check, then the whole-books ledger check.
 * @internal The operator CLI, on the marketplace's own machine.
 */
export async function verifyBackup(file: string): Promise<BackupCheck> {
  if (!existsSync(file)) throw new SvcError('not_found', `no backup file at ${file}`);
  let sqlite: Sqlite.Database;
  try {
    sqlite = new Sqlite(file, { readonly: true, fileMustExist: true });
  } catch (e) {
    return { file, integrity_ok: false, integrity_errors: [(e as Error).message], books: null, ok: false };
  }
  const db: Db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  try {
    let rows: { integrity_check: string }[];
    try {
      rows = sqlite.pragma('integrity_check') as { integrity_check: string }[];
    } catch (e) {
      return { file, integrity_ok: false, integrity_errors: [(e as Error).message], books: null, ok: false };
    }
    const errors = rows.map((r) => r.integrity_check).filter((m) => m !== 'ok');
    if (errors.length > 0) return { file, integrity_ok: false, integrity_errors: errors, books: null, ok: false };
    const books = await checkBooks(db);
    return { file, integrity_ok: true, integrity_errors: [], books, ok: books.ok };
  } finally {
    await db.destroy();
  }
}

/**
 * Whether some process has the database open. Every svc process opens the file in WAL mode and so holds a shared
 * lock on it for as long as it runs; a connection in EXCLUSIVE locking mode cannot then take its write lock.
 * @internal A step of restoreBackup.
 */
export function databaseInUse(dbFile: string): boolean {
  if (!existsSync(dbFile)) return false;
  const probe = new Sqlite(dbFile, { timeout: 0 });
  try {
    probe.pragma('locking_mode = EXCLUSIVE');
    probe.exec('BEGIN EXCLUSIVE; COMMIT');
    return false;
  } catch {
    return true;
  } finally {
    probe.close();
  }
}

export interface RestoreResult {
  restored: string;
  /** Where the database that was in place went (never deleted), or null when there was none. */
  previous: string | null;
  check: BackupCheck;
}

/**
 * Puts a verified backup in place of the data dir's database. The processes using it must be stopped.
 * @internal The operator CLI, on the marketplace's own machine.
 */
export async function restoreBackup(file: string, dbFile: string, now: number): Promise<RestoreResult> {
  const check = await verifyBackup(file);
  if (!check.ok)
    throw new SvcError('invalid_state', `backup ${file} failed its check; nothing was restored`, {
      extra: { integrity_errors: check.integrity_errors, books_ok: check.books?.ok ?? false },
    });
  if (databaseInUse(dbFile))
    throw new SvcError('conflict', `${dbFile} is in use: stop every svc process on this data dir, then restore`);
  mkdirSync(dirname(dbFile), { recursive: true });
  const staged = `${dbFile}.restoring`;
  copyFileSync(file, staged);
  let previous: string | null = null;
  if (existsSync(dbFile)) {
    previous = `${dbFile}.before-restore-${new Date(now).toISOString().replace(/[:.]/g, '-')}`;
    renameSync(dbFile, previous);
  }
  // A stale WAL beside the restored file would be replayed into it.
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(dbFile + suffix)) {
      if (previous) renameSync(dbFile + suffix, previous + suffix);
      else rmSync(dbFile + suffix);
    }
  }
  renameSync(staged, dbFile);
  return { restored: dbFile, previous, check };
}

const SCHEDULED = /^svc-(\d{8}T\d{6}Z)\.db$/;

/**
 * One scheduled backup into `dir` named by time, then the oldest beyond `keep` removed.
 * @internal The scheduled backup job.
 */
export async function scheduledBackup(
  sqlite: Sqlite.Database,
  dir: string,
  keep: number,
  now: number,
): Promise<BackupResult & { removed: string[] }> {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const result = await createBackup(sqlite, join(dir, `svc-${stamp}.db`));
  const ours = readdirSync(dir)
    .filter((f) => SCHEDULED.test(f))
    .sort();
  const removed = ours.slice(0, Math.max(0, ours.length - keep));
  for (const f of removed) rmSync(join(dir, f), { force: true });
  return { ...result, removed: removed.map((f) => join(dir, basename(f))) };
}

/** Last outcome of the scheduled backups in this process, for metrics and logs. */
export const backupStatus = { lastSuccessAt: 0, lastFailureAt: 0, lastBytes: 0, lastMs: 0 };
