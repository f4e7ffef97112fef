/**
 * The 0022_narrow_usage migration case, run on either store (test/unit/db/migration-0022.test.ts on SQLite,
 * test/integration/store/migration-0022.test.ts on PostgreSQL): old text-id rows become narrow rows that read back
 * identically, every id gets exactly one num, the request id stays unique, the dictionary is append-only, a new call reuses a migrated num, the
 * books check reads the new rows, and `down` restores the old table with the same rows.
 */
import { Migrator, sql } from 'kysely';
import { expect } from 'vitest';
import type { Db } from '../../core/db/database.js';
import { dialectOf } from '../../core/db/dialect.js';
import { insertUsageCalls } from '../../core/db/id-nums.js';
import { migrationsFor } from '../../core/db/migrations/index.js';
import { checkUsageCharges } from '../../control/ledger/books.service.js';
import { usageWithIds, withLegacyUsage, type LegacyUsageEventsTable } from './db.js';

const T = 1_790_000_000_000;

const OLD: LegacyUsageEventsTable[] = [
  {
    id: 'req_0000000001aaaaaa00000001',
    org_id: 'org_consumer_a',
    key_id: 'key_a1',
    api_id: 'api_weather',
    endpoint_id: 'ep_weather_now',
    provider_org_id: 'org_provider',
    method: 'GET',
    status: 200,
    latency_ms: 12,
    price_cents: 3,
    charged_cents: 3,
    error_code: null,
    created_at: T,
  },
  {
    id: 'req_0000000002aaaaaa00000002',
    org_id: 'org_consumer_a',
    key_id: 'key_a2',
    api_id: 'api_weather',
    endpoint_id: 'ep_weather_now',
    provider_org_id: 'org_provider',
    method: 'POST',
    status: 502,
    latency_ms: 30_001,
    price_cents: 3,
    charged_cents: 0,
    error_code: 'upstream_status',
    created_at: T + 1,
  },
  {
    id: 'req_0000000003bbbbbb00000001',
    org_id: 'org_consumer_b',
    key_id: 'key_b1',
    api_id: 'api_maps',
    endpoint_id: 'ep_maps_tile',
    provider_org_id: 'org_provider',
    method: 'GET',
    status: 200,
    latency_ms: 0,
    price_cents: 9_007_199_254,
    charged_cents: 9_007_199_254,
    error_code: null,
    created_at: T + 86_400_000,
  },
  // A provider calling its own API: org and provider are one id, one num.
  {
    id: 'legacy-id-without-the-usual-shape',
    org_id: 'org_provider',
    key_id: 'key_p1',
    api_id: 'api_maps',
    endpoint_id: 'ep_maps_tile',
    provider_org_id: 'org_provider',
    method: 'DELETE',
    status: 204,
    latency_ms: 5,
    price_cents: 1,
    charged_cents: 1,
    error_code: null,
    created_at: T + 2 * 86_400_000,
  },
];

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export async function usageMigrationCase(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrationsFor(dialectOf(db)) } });
  expect((await migrator.migrateTo('0021_gateway_fleet')).error).toBeUndefined();
  const legacy = withLegacyUsage(db);
  await legacy.insertInto('usage_events').values(OLD).execute();

  expect((await migrator.migrateTo('0022_narrow_usage')).error).toBeUndefined();

  // Every row reads back exactly, through the nums.
  const back = await db.selectFrom(usageWithIds(db)).selectAll().execute();
  expect(back.map((r) => ({ ...r, created_at: Number(r.created_at) })).sort(byId)).toEqual([...OLD].sort(byId));
  // One num per distinct id, in order of first use.
  const nums = await db.selectFrom('id_nums').select(['num', 'id']).orderBy('num').execute();
  const distinct = new Set(OLD.flatMap((r) => [r.org_id, r.key_id, r.api_id, r.endpoint_id, r.provider_org_id]));
  expect(nums.map((n) => n.id).sort()).toEqual([...distinct].sort());
  expect(nums[0]!.id).toBe('org_consumer_a');
  const numOf = new Map(nums.map((n) => [n.id, Number(n.num)]));
  const self = await db
    .selectFrom('usage_calls')
    .select(['org_num', 'provider_num'])
    .where('request_id', '=', 'legacy-id-without-the-usual-shape')
    .executeTakeFirstOrThrow();
  expect(self).toEqual({ org_num: numOf.get('org_provider'), provider_num: numOf.get('org_provider') });
  // The old table is gone; the narrow one has its two integer indexes.
  const tables = await sql<{ n: string }>`SELECT table_name AS n FROM information_schema.tables
      WHERE table_name IN ('usage_events', 'usage_calls', 'id_nums')`
    .execute(db)
    .catch(() => null);
  if (tables) expect(tables.rows.map((r) => r.n).sort()).toEqual(['id_nums', 'usage_calls']);
  else {
    const names = await sql<{ name: string }>`SELECT name FROM sqlite_master
        WHERE name IN ('usage_events', 'usage_calls', 'id_nums', 'usage_calls_org', 'usage_calls_api')`.execute(db);
    expect(names.rows.map((r) => r.name).sort()).toEqual([
      'id_nums',
      'usage_calls',
      'usage_calls_api',
      'usage_calls_org',
    ]);
  }

  // The dictionary is append-only: a num never changes meaning.
  await expect(
    db.updateTable('id_nums').set({ id: 'org_someone_else' }).where('id', '=', 'org_consumer_a').execute(),
  ).rejects.toThrow(/append-only/);
  await expect(db.deleteFrom('id_nums').where('id', '=', 'org_consumer_a').execute()).rejects.toThrow(/append-only/);

  // The request id is still the row's key: a second row for one call is refused (so is a second charge).
  const { id: firstId, ...first } = OLD[0]!;
  await expect(insertUsageCalls(db, [{ ...first, request_id: firstId }])).rejects.toThrow(/unique|UNIQUE|duplicate/);

  // A new call by a migrated org reuses its num; a new endpoint gets the next one.
  await insertUsageCalls(db, [
    { ...first, request_id: 'req_after', endpoint_id: 'ep_weather_new', created_at: T + 3 * 86_400_000 },
  ]);
  const after = await db
    .selectFrom('usage_calls')
    .select(['org_num', 'endpoint_num'])
    .where('request_id', '=', 'req_after')
    .executeTakeFirstOrThrow();
  expect(after.org_num).toBe(numOf.get('org_consumer_a'));
  expect(after.endpoint_num).toBeGreaterThan(Math.max(...numOf.values()));

  // The books check reads the narrow rows: the consumers' and the provider's charged usage by org id.
  const mismatches = await checkUsageCharges(db);
  const usageCents = (side: string, org: string) =>
    Number(mismatches.find((m) => m.side === side && m.org_id === org)?.usage_cents ?? 0);
  expect(usageCents('consumer', 'org_consumer_a')).toBe(6);
  expect(usageCents('consumer', 'org_consumer_b')).toBe(9_007_199_254);
  expect(usageCents('provider', 'org_provider')).toBe(3 + 9_007_199_254 + 1 + 3);

  // And down again: the old table with the same rows (plus the one written since).
  expect((await migrator.migrateTo('0021_gateway_fleet')).error).toBeUndefined();
  const restored = await legacy.selectFrom('usage_events').selectAll().orderBy('id').execute();
  expect(restored.map((r) => ({ ...r, created_at: Number(r.created_at) })).filter((r) => r.id !== 'req_after')).toEqual(
    [...OLD].sort(byId),
  );
}
