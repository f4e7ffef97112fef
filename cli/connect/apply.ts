/**
 * Plans and writes `svc connect` changes: for each chosen client, the file's new text; unchanged files are not
 * touched, changed ones get a backup and an atomic write. Backups live in ~/.svc/backups/<stamp>/ (never beside
 * the file, so none lands in a repository's work tree), mode 0600, and a key the new file no longer holds is
 * blanked out of the backup: a backup must not keep alive a key the person just replaced.
 */
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { writeAtomic } from '../config-store.js';
import { type Auth, type ClientSpec, SERVER_NAME } from './clients.js';
import { upsertJson } from './edit-json.js';
import { upsertToml } from './edit-toml.js';
import { upsertYaml } from './edit-yaml.js';

export interface FileChange {
  target: string;
  file: string;
  before: string | null;
  after: string;
  /** The new text holds a plaintext key: the file is written 0600 whatever its mode was. */
  secret?: boolean;
}

export function readMaybe(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

export function planClient(spec: ClientSpec, file: string, url: string, auth: Auth): FileChange {
  const before = readMaybe(file);
  const entry = spec.entry(url, auth);
  const after =
    spec.format === 'toml'
      ? upsertToml(before, SERVER_NAME, entry)
      : spec.format === 'yaml'
        ? upsertYaml(file, before, [...spec.container, SERVER_NAME], entry)
        : upsertJson(file, before, [...spec.container, SERVER_NAME], entry);
  return {
    target: spec.id,
    file,
    before,
    after: before !== null && after === before ? before : after,
    secret: auth.kind === 'plain',
  };
}

export function changed(c: FileChange): boolean {
  return c.before !== c.after;
}

/** svc API keys and OAuth tokens, as they appear in a client's file. */
const SECRET = /svc_(?:live|at|rt)_[0-9A-Za-z]{8,}/g;

/** The old text with every svc key the new text no longer holds blanked out (same length of the prefix kept). */
export function scrubbed(before: string, after: string): string {
  const kept = new Set(after.match(SECRET) ?? []);
  return before.replace(SECRET, (k) =>
    kept.has(k) ? k : `${k.slice(0, k.indexOf('_', 4) + 1)}REMOVED_BY_SVC_CONNECT`,
  );
}

export function backupDir(stamp: string): string {
  return join(homedir(), '.svc', 'backups', stamp);
}

/** The backup's name: the file's absolute path, flattened, so two clients' `settings.json` never collide. */
export function backupPath(file: string, stamp: string): string {
  const flat = resolve(file)
    .replace(/^[A-Za-z]:/, '')
    .replace(/^[\\/]+/, '')
    .replace(/[\\/]+/g, '__');
  return join(backupDir(stamp), flat);
}

/** Writes one change; returns the backup's path (null for a new file). */
export function writeChange(c: FileChange, stamp: string): string | null {
  mkdirSync(dirname(c.file), { recursive: true });
  let backup: string | null = null;
  let mode = 0o600;
  if (c.before !== null) {
    const was = statSync(c.file).mode & 0o777;
    mode = c.secret ? was & 0o700 : was;
    backup = backupPath(c.file, stamp);
    mkdirSync(dirname(backup), { recursive: true, mode: 0o700 });
    writeAtomic(backup, scrubbed(c.before, c.after), 0o600);
  }
  writeAtomic(c.file, c.after, mode);
  return backup;
}
