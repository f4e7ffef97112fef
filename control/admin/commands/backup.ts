/**
 * `svc-admin backup create|verify|restore` (docs/operations.md "Backups"): an online consistent copy while svc
 * runs, a check of a copy (integrity + the ledger check), and a restore into a stopped data dir.
 */
import { defineCommand } from 'citty';
import { resolve } from 'node:path';
import { loadConfigOrExit } from '../../../core/config.js';
import { openSqlite } from '../../../core/db/database.js';
import { SvcError } from '../../../core/errors.js';
import { createBackup, restoreBackup, verifyBackup, type BackupCheck } from '../../backup/backup.service.js';
import { fail, jsonArg, print } from '../admin-context.js';

const fileArg = { file: { type: 'positional', description: 'Backup file', required: true } } as const;

/** Runs an operator action, turning an SvcError into the one-line `error:` exit. */
async function orFail<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof SvcError) fail(e.message);
    throw e;
  }
}

function checkLines(c: BackupCheck): string[] {
  const lines = [`${c.ok ? 'OK' : 'FAILED'}: ${c.file}`];
  lines.push(c.integrity_ok ? 'integrity: ok' : `integrity: ${c.integrity_errors.join('; ')}`);
  if (c.books)
    lines.push(
      `ledger: ${c.books.ok ? 'ok' : 'MISMATCH'} (${c.books.orgs_checked} org balances checked, ${c.books.ledger_mismatches.length + c.books.usage_mismatches.length + c.books.payout_mismatches.length} mismatches)`,
    );
  return lines;
}

const create = defineCommand({
  meta: { name: 'create', description: 'Take an online, consistent copy of the database (safe while svc runs)' },
  args: { ...fileArg, ...jsonArg },
  run: ({ args }) =>
    orFail(async () => {
      const config = loadConfigOrExit();
      const sqlite = openSqlite(config.dbFile);
      try {
        const r = await createBackup(sqlite, resolve(args.file));
        print(args.json, r, [
          `backup written: ${r.file} (${r.bytes} bytes, ${r.pages} pages, ${r.usage_rows} usage rows, ${r.ms} ms)`,
          'Keep the data dir secret key with it (secret.key, or SVC_SECRET_KEY): upstream secrets need it.',
        ]);
      } finally {
        sqlite.close();
      }
    }),
});

const verify = defineCommand({
  meta: { name: 'verify', description: 'Check a backup: SQLite integrity and the whole ledger check' },
  args: { ...fileArg, ...jsonArg },
  run: ({ args }) =>
    orFail(async () => {
      const c = await verifyBackup(resolve(args.file));
      print(args.json, c, checkLines(c));
      if (!c.ok) process.exitCode = 1;
    }),
});

const restore = defineCommand({
  meta: {
    name: 'restore',
    description: "Put a checked backup in place of the (stopped) data dir's database; the old one is kept beside it",
  },
  args: { ...fileArg, ...jsonArg },
  run: ({ args }) =>
    orFail(async () => {
      const config = loadConfigOrExit();
      const r = await restoreBackup(resolve(args.file), config.dbFile, Date.now());
      print(args.json, r, [
        ...checkLines(r.check),
        `restored into ${r.restored}`,
        r.previous ? `the database that was there is kept as ${r.previous}` : 'there was no database before',
      ]);
    }),
});

export const backupCommand = defineCommand({
  meta: { name: 'backup', description: 'Online backups: create, verify, restore' },
  subCommands: { create, verify, restore },
});
