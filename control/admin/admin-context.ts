/** What an operator command needs: config and a migrated handle on the marketplace's SQLite file. */
import { loadConfigOrExit } from '../config.js';
import { openDatabase, type DbHandles } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';

export async function withAdminDb<T>(fn: (h: DbHandles, now: number) => Promise<T>): Promise<T> {
  const config = loadConfigOrExit();
  const h = openDatabase(config.dbFile);
  try {
    await migrateToLatest(h.db);
    return await fn(h, Date.now());
  } finally {
    await h.close();
  }
}

/** `--json` prints one JSON document; otherwise one line per item. */
export function print(json: boolean, data: unknown, lines: string[]): void {
  process.stdout.write(
    json ? JSON.stringify({ ok: true, data }, null, 2) + '\n' : lines.join('\n') + (lines.length ? '\n' : ''),
  );
}

export function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

export const jsonArg = { json: { type: 'boolean', description: 'Print JSON', default: false } } as const;
