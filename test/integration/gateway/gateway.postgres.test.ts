/**
 * The gateway process on PostgreSQL (SVC_DATABASE_URL): the real control plane and two real gateway processes
 * (two holders) on one real PostgreSQL 15 (test/helpers/postgres.ts), paid calls spread over both, the
 * Idempotency-Key claim across them, a revoke reaching both through LISTEN/NOTIFY, the housekeeping fold, and a
 * clean stop returning every slice. After each: the books check exact and balances equal ledger sums.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gw, startUpstream, until, type Upstream } from './fixture.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { baseEnv, startProcess, tempDataDir, type RunningProcess } from '../../helpers/processes.js';
import { call } from '../../helpers/http.js';
import { expectLedgerConsistent, grantCredits, seedKey, seedListing, seedOrg } from '../../helpers/db.js';
import { postgresAvailable, usePostgresDatabase } from '../../helpers/postgres.js';
import { openPostgres, type PgHandles } from '../../../core/db/database.js';
import { migrateToLatest } from '../../../core/db/migrate.js';
import { loadSecretKey } from '../../../core/secret-key.js';
import { loadConfig } from '../../../core/config.js';
import { Pg } from '../../../gateway/pg/connect.js';
import { moneyProblems } from '../../unit/gateway/pg/pg-kit.js';
import { sql } from '../../../gateway/pg/connect.js';

const why = postgresAvailable() ? null : 'PostgreSQL 15 binaries not found (Debian postgresql-15)';
const database = why ? null : usePostgresDatabase();

let data: ReturnType<typeof tempDataDir>;
let h: PgHandles;
let pg: Pg;
let upstream: Upstream;
let control: RunningProcess;
let g1: RunningGateway;
let g2: RunningGateway;
let slug: string;
let env: Record<string, string>;

beforeAll(async () => {
  if (why) return;
  const url = database!.get();
  data = tempDataDir();
  h = openPostgres(url, { max: 2 });
  await migrateToLatest(h.db);
  pg = new Pg(url, { max: 2 });
  upstream = await startUpstream();
  const provider = await seedOrg(h);
  slug = `pg-${Math.random().toString(36).slice(2, 8)}`;
  await seedListing(h, {
    orgId: provider.orgId,
    slug,
    baseUrl: upstream.url,
    endpoints: [
      { method: 'GET', path: '/users/{id}', priceCents: 3 },
      { method: 'GET', path: '/free', priceCents: 0 },
    ],
    injection: 'bearer',
    secret: 'provider-secret-pg',
    secretKey: loadSecretKey(loadConfig({ SVC_DATA_DIR: data.dir })),
  });
  env = baseEnv(data.dir, {
    SVC_DATABASE_URL: url,
    SVC_GATEWAY_HEARTBEAT_MS: '200',
    SVC_GATEWAY_STALE_MS: '3000',
    SVC_GATEWAY_POLL_MS: '100',
  });
  control = await startProcess('control', 'control/main.js', env, { timeoutMs: 60_000 });
  [g1, g2] = await Promise.all([
    startGateway(data.dir, env, { timeoutMs: 60_000 }),
    startGateway(data.dir, env, { timeoutMs: 60_000 }),
  ]);
}, 180_000);

afterAll(async () => {
  await g1?.stop();
  await g2?.stop();
  await control?.stop();
  await upstream?.close();
  await pg?.end();
  await h?.close();
  data?.cleanup();
});

async function consumer(cents: number) {
  const org = await seedOrg(h);
  if (cents) await grantCredits(h, org.orgId, cents);
  return org;
}

const hits = (path: string) => upstream.seen.filter((r) => r.url.startsWith(path)).length;

async function credit(orgId: string): Promise<{ credit: number; reserved: number; ledger: number }> {
  const [r] = await pg.rows<{ credit: number; reserved: number; ledger: number }>(sql`
    SELECT credit_cents AS credit, reserved_cents AS reserved,
      (SELECT COALESCE(sum(amount_cents), 0) FROM ledger_entries e WHERE e.org_id = b.org_id AND e.status = 'settled')::bigint AS ledger
    FROM balances b WHERE org_id = ${orgId}`);
  return r!;
}

describe.skipIf(why)('gateway processes on PostgreSQL', () => {
  it('both gateways announce PostgreSQL and register a holder each in gateway_instances', async () => {
    const rows = await pg.rows<{ n: number }>(
      sql`SELECT count(*) AS n FROM gateway_instances WHERE stopped_at IS NULL`,
    );
    expect(rows[0]!.n).toBe(2);
    expect((await gw(g1.url, 'GET', `/${slug}/free`)).status).toBe(401);
  });

  it('60 concurrent paid calls over two gateways against 100 cents at 3 cents: exactly 33 answer 200, each charged once', async () => {
    const org = await consumer(100);
    const before = hits('/users/');
    const out = await Promise.all(
      Array.from({ length: 60 }, (_, i) => gw(i % 2 ? g1.url : g2.url, 'GET', `/${slug}/users/${i}`, { key: org.key })),
    );
    const ok = out.filter((r) => r.status === 200).length;
    expect(ok).toBe(33);
    expect(out.filter((r) => r.status === 402).every((r) => r.code === 'insufficient_credits')).toBe(true);
    expect(ok + out.filter((r) => r.status === 402).length).toBe(60);
    // Every 200 reached the upstream once; no refused call did.
    expect(hits('/users/') - before).toBe(33);
    const [u] = await pg.rows<{ n: number; cents: number }>(
      sql`SELECT count(*) AS n, COALESCE(sum(charged_cents), 0)::bigint AS cents FROM usage_calls
          WHERE org_num = (SELECT num FROM id_nums WHERE id = ${org.orgId})`,
    );
    expect(u).toEqual({ n: 33, cents: 99 });
    expect(await moneyProblems(pg)).toEqual([]);
    // Housekeeping folds the slices' spend into the org row: credit = the ledger sum within a few intervals.
    expect(await until(async () => (await credit(org.orgId)).credit === 1, 5_000)).toBe(true);
    const c = await credit(org.orgId);
    expect(c.ledger).toBe(1);
    await expectLedgerConsistent(h);
  });

  it('an Idempotency-Key sent to one gateway and retried on the other is answered from the first: one upstream hit, one charge', async () => {
    const org = await consumer(50);
    const before = hits('/users/77');
    const headers = { 'idempotency-key': 'pg-idem-1' };
    const a = await gw(g1.url, 'GET', `/${slug}/users/77`, { key: org.key, headers });
    const b = await gw(g2.url, 'GET', `/${slug}/users/77`, { key: org.key, headers });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers.get('x-svc-idempotent-replay')).toBe('true');
    expect(hits('/users/77') - before).toBe(1);
    const [u] = await pg.rows<{ n: number }>(
      sql`SELECT count(*) AS n FROM usage_calls WHERE org_num = (SELECT num FROM id_nums WHERE id = ${org.orgId})`,
    );
    expect(u!.n).toBe(1);
    expect(await moneyProblems(pg)).toEqual([]);
  });

  it('a key revoked through the control plane is refused by both gateways within a second (LISTEN/NOTIFY)', async () => {
    const org = await consumer(20);
    expect((await gw(g1.url, 'GET', `/${slug}/users/1`, { key: org.key })).status).toBe(200);
    expect((await gw(g2.url, 'GET', `/${slug}/users/1`, { key: org.key })).status).toBe(200);
    const del = await call(control.url, 'DELETE', `/v1/keys/${org.keyId}`, { token: org.key });
    expect(del.status).toBe(200);
    const t0 = Date.now();
    for (const g of [g1, g2])
      expect(
        await until(
          async () => (await gw(g.url, 'GET', `/${slug}/free`, { key: org.key })).code === 'key_revoked',
          1_500,
        ),
      ).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1_500);
    // A key created after the gateways cached "unknown" for it works at once too (the 'key' change clears that).
    const fresh = await seedKey(h, org.orgId, { scopes: ['proxy:call'] });
    expect((await gw(g1.url, 'GET', `/${slug}/free`, { key: fresh.key })).status).toBe(200);
  });

  it('a clean stop returns every slice: nothing reserved, credit = ledger for every org, books exact', async () => {
    expect(await g1.stop()).toBe(0);
    expect(await g2.stop()).toBe(0);
    const [open] = await pg.rows<{ n: number }>(
      sql`SELECT count(*) AS n FROM balance_leases WHERE released_at IS NULL`,
    );
    expect(open!.n).toBe(0);
    const bad = await pg.rows(sql`
      SELECT b.org_id FROM balances b
      WHERE b.reserved_cents <> 0 OR b.credit_cents <> COALESCE((SELECT sum(amount_cents) FROM ledger_entries e
        WHERE e.org_id = b.org_id AND e.status = 'settled'), 0)`);
    expect(bad).toEqual([]);
    expect(await moneyProblems(pg)).toEqual([]);
    await expectLedgerConsistent(h);
  });
});
