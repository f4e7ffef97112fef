/**
 * Plans and writes `svc connect` changes: for each chosen client, the file's new text; unchanged files are not
 * touched, changed ones get a timestamped backup and an atomic write (keeping the file's mode, 0600 for new ones).
 */
import { copyFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeAtomic } from '../config-store.js';
import { type Auth, type ClientSpec, SERVER_NAME } from './clients.js';
import { upsertJson } from './edit-json.js';
import { upsertToml } from './edit-toml.js';

export interface FileChange {
  target: string;
  file: string;
  before: string | null;
  after: string;
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
      : upsertJson(file, before, [...spec.container, SERVER_NAME], entry);
  return { target: spec.id, file, before, after: before !== null && after === before ? before : after };
}

export function changed(c: FileChange): boolean {
  return c.before !== c.after;
}

/** Writes one change; returns the backup's path (null for a new file). */
export function writeChange(c: FileChange, stamp: string): string | null {
  mkdirSync(dirname(c.file), { recursive: true });
  let backup: string | null = null;
  let mode = 0o600;
  if (c.before !== null) {
    mode = statSync(c.file).mode & 0o777;
    backup = `${c.file}.bak-${stamp}`;
    copyFileSync(c.file, backup);
  }
  writeAtomic(c.file, c.after, mode);
  return backup;
}
