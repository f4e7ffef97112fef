/**
 * 0022 replaces the text-keyed usage_events by the narrow, integer-keyed usage_calls and the id_nums dictionary
 * (SQLite here; the same case runs on PostgreSQL in test/integration/store/migration-0022.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type DbHandles } from '../../../core/db/database.js';
import { usageMigrationCase } from '../../helpers/usage-migration.js';

let dir = '';
let h: DbHandles | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('migration 0022_narrow_usage (SQLite)', () => {
  it('migrates old usage rows to the narrow row, readable by id, and back', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-mig-'));
    h = openDatabase(join(dir, 'svc.db'));
    await usageMigrationCase(h.db);
  });

  it('the narrow row is one b-tree keyed by the request id, with two integer indexes the readers use', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-mig-'));
    h = openDatabase(join(dir, 'svc.db'));
    const { migrateToLatest } = await import('../../../core/db/migrate.js');
    await migrateToLatest(h.db);
    const ddl = h.sqlite.prepare("SELECT sql FROM sqlite_master WHERE name = 'usage_calls'").pluck().get() as string;
    expect(ddl).toMatch(/request_id TEXT PRIMARY KEY/);
    expect(ddl).toMatch(/WITHOUT ROWID\s*$/);
    const idx = h.sqlite
      .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'usage_calls'")
      .all() as { name: string; sql: string }[];
    expect(idx.map((i) => i.name).sort()).toEqual(['usage_calls_api', 'usage_calls_org']);
    // The readers' lookups use them (no table scan per usage page or analytics query).
    const plan = (q: string) =>
      (h!.sqlite.prepare(`EXPLAIN QUERY PLAN ${q}`).all() as { detail: string }[]).map((p) => p.detail).join(' ');
    expect(plan('SELECT * FROM usage_calls WHERE org_num = 1 AND created_at >= 0')).toContain('usage_calls_org');
    expect(plan('SELECT * FROM usage_calls WHERE api_num = 1 AND created_at >= 0')).toContain('usage_calls_api');
  });
});
