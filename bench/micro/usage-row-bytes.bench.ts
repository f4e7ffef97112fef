/**
 * Bytes per call of the usage row, before and after 0022_narrow_usage, measured with SQLite's `dbstat` on the same
 * calls: N calls with gateway-shaped ids (fast ids; 20 consumer orgs with 2 keys each, 10 APIs with 5 endpoints,
 * 5 providers) are written as 0021's `usage_events`, measured (table + usage_org + usage_api), migrated by 0022 and
 * measured again (usage_calls + its two indexes; id_nums separately: it grows with ids, not with calls).
 * Prints one JSON line. `node dist/bench/micro/usage-row-bytes.bench.js [calls]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { openDatabase } from '../../core/db/database.js';
import { migrationsFor } from '../../core/db/migrations/index.js';
import { fastId } from '../../gateway/fast-id.js';

export interface UsageRowBytes {
  calls: number;
  /** Per call: b-tree payload bytes (the records) and page bytes (what the file and the WAL carry). */
  before: { payloadPerCall: number; pagesBytesPerCall: number; btrees: Record<string, number> };
  after: { payloadPerCall: number; pagesBytesPerCall: number; btrees: Record<string, number> };
  /** id_nums after the migration: total bytes (per distinct id, not per call). */
  idNumsBytes: number;
}

function _stat(sqlite: import('better-sqlite3').Database, names: string[]) {
  const rows = sqlite
    .prepare(
      `SELECT name, SUM(payload) AS payload, SUM(pgsize) AS pages FROM dbstat WHERE name IN (${names.map(() => '?').join(',')}) GROUP BY name`,
    )
    .all(...names) as { name: string; payload: number; pages: number }[];
  return rows;
}

async function _main(): Promise<void> {
  const calls = Number(process.argv[2] ?? '100000');
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-usage-bytes-'));
  const h = openDatabase(join(dir, 'svc.db'));
  try {
    const migrator = new Migrator({ db: h.db, provider: { getMigrations: async () => migrationsFor('sqlite') } });
    const r0 = await migrator.migrateTo('0021_gateway_fleet');
    if (r0.error) throw r0.error;
    const orgs = Array.from({ length: 20 }, () => fastId('org'));
    const keys = orgs.map((o) => [fastId('key'), fastId('key'), o] as const);
    const providers = Array.from({ length: 5 }, () => fastId('org'));
    const apis = Array.from({ length: 10 }, (_, i) => ({
      id: fastId('api'),
      provider: providers[i % 5]!,
      endpoints: Array.from({ length: 5 }, () => fastId('ep')),
    }));
    const insert = h.sqlite.prepare(
      `INSERT INTO usage_events (id, org_id, key_id, api_id, endpoint_id, provider_org_id, method, status, latency_ms, price_cents, charged_cents, error_code, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const t0 = Date.now() - calls;
    h.sqlite.transaction(() => {
      for (let i = 0; i < calls; i++) {
        const k = keys[i % keys.length]!;
        const a = apis[(i * 7) % apis.length]!;
        const failed = i % 50 === 0;
        insert.run(
          fastId('req', t0 + i),
          k[2],
          k[i % 2]!,
          a.id,
          a.endpoints[i % 5]!,
          a.provider,
          i % 10 === 0 ? 'POST' : 'GET',
          failed ? 502 : 200,
          20 + (i % 300),
          3,
          failed ? 0 : 3,
          failed ? 'upstream_status' : null,
          t0 + i,
        );
      }
    })();
    const sum = (rows: { name: string; payload: number; pages: number }[]) => ({
      payloadPerCall: Math.round((rows.reduce((s, r) => s + r.payload, 0) / calls) * 10) / 10,
      pagesBytesPerCall: Math.round((rows.reduce((s, r) => s + r.pages, 0) / calls) * 10) / 10,
      btrees: Object.fromEntries(rows.map((r) => [r.name, Math.round((r.pages / calls) * 10) / 10])),
    });
    h.sqlite.exec('VACUUM'); // both shapes measured freshly packed
    const before = sum(_stat(h.sqlite, ['usage_events', 'usage_org', 'usage_api']));
    const r1 = await migrator.migrateTo('0022_narrow_usage');
    if (r1.error) throw r1.error;
    h.sqlite.exec('VACUUM');
    const after = sum(_stat(h.sqlite, ['usage_calls', 'usage_calls_org', 'usage_calls_api']));
    const idNums = _stat(h.sqlite, ['id_nums', 'sqlite_autoindex_id_nums_1']);
    const out: UsageRowBytes = { calls, before, after, idNumsBytes: idNums.reduce((s, r) => s + r.pages, 0) };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } catch (e) {
    process.stdout.write(`${JSON.stringify({ calls, error: (e as Error).message })}\n`);
  } finally {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void _main();
