import { afterEach, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { makeWorld, balanceOf, type World } from './fixture.js';
import { startGateway, WORKERS_SHARE_PORT, type RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, grantCredits, expectLedgerConsistent, usageWithIds } from '../../helpers/db.js';

let w: World | undefined;
const gateways: RunningGateway[] = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.stop('SIGTERM');
  await w?.cleanup();
  w = undefined;
});

async function callMany(urls: string[], path: string, key: string, n: number, connections: number) {
  const agent = new Agent({ connections });
  const statuses: number[] = [];
  const requestIds: string[] = [];
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      try {
        const r = await request(urls[i % urls.length]! + path, {
          method: 'GET',
          headers: { authorization: `Bearer ${key}` },
          dispatcher: agent,
        });
        await r.body.text();
        statuses.push(r.statusCode);
        if (r.statusCode === 200) requestIds.push(String(r.headers['x-svc-request-id']));
      } catch {
        statuses.push(0);
      }
    }),
  );
  await agent.close();
  return { statuses, requestIds };
}

describe.skipIf(!WORKERS_SHARE_PORT)('gateway across processes', () => {
  it('1,000 concurrent paid calls against a balance for 400, over two gateway processes: exactly 400 succeed', async () => {
    w = await makeWorld({ endpoints: [{ method: 'GET', path: '/users/{id}', priceCents: 1 }] });
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 400);
    const g = await startGateway(w.dataDir, {}, { workers: 2 });
    gateways.push(g);
    // Two worker processes behind one port: the kernel spreads the connections (SO_REUSEPORT).
    expect(g.workerPids).toHaveLength(2);
    const { statuses, requestIds } = await callMany([g.url], `/${w.slug}/users/1`, c.key, 1000, 200);
    expect(statuses.filter((s) => s === 200)).toHaveLength(400);
    expect(statuses.filter((s) => s === 402)).toHaveLength(600);
    const bal = await balanceOf(w.h, c.orgId);
    expect(bal.credit_cents).toBe(0);
    await expectLedgerConsistent(w.h);
    const charged = await w.h.db
      .selectFrom(usageWithIds(w.h.db))
      .select('id')
      .where('org_id', '=', c.orgId)
      .where('charged_cents', '=', 1)
      .execute();
    expect(charged).toHaveLength(400);
    expect(new Set(charged.map((u) => u.id))).toEqual(new Set(requestIds));
    const entries = await w.h.db
      .selectFrom('ledger_entries')
      .select((eb) => eb.fn.sum<number>('amount_cents').as('s'))
      .where('org_id', '=', c.orgId)
      .where('kind', '=', 'call_charge')
      .executeTakeFirstOrThrow();
    expect(Number(entries.s)).toBe(-400);
    // Both processes served paid calls.
    const holders = await w.h.db
      .selectFrom('balance_leases')
      .select('holder_id')
      .distinct()
      .where('org_id', '=', c.orgId)
      .execute();
    expect(holders.length).toBe(2);
  }, 60_000);

  it('concurrent retries with one Idempotency-Key over two gateway processes: one upstream call, one charge', async () => {
    w = await makeWorld({ endpoints: [{ method: 'GET', path: '/users/{id}', priceCents: 3 }] });
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 100);
    const g = await startGateway(w.dataDir, {}, { workers: 2 });
    gateways.push(g);
    // One connection per call, so the kernel spreads the retries over both processes (SO_REUSEPORT).
    const agent = new Agent({ connections: 64, pipelining: 0 });
    const rs = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const r = await request(`${g.url}/${w!.slug}/users/7`, {
          method: 'GET',
          headers: { authorization: `Bearer ${c.key}`, 'idempotency-key': 'one-job', connection: 'close' },
          dispatcher: agent,
        });
        return { status: r.statusCode, body: await r.body.text(), charged: r.headers['x-svc-charged-cents'] };
      }),
    );
    await agent.close();
    expect(rs.every((r) => r.status === 200)).toBe(true);
    expect(new Set(rs.map((r) => r.body)).size).toBe(1);
    expect(rs.filter((r) => r.charged === '3')).toHaveLength(1);
    expect(w.upstream.seen.filter((s) => s.url.startsWith('/users/7'))).toHaveLength(1);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(97);
    await expectLedgerConsistent(w.h);
  }, 60_000);

  it('a key budget is never exceeded across processes', async () => {
    w = await makeWorld({ endpoints: [{ method: 'GET', path: '/users/{id}', priceCents: 2 }] });
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 10_000);
    await w.h.db
      .updateTable('api_keys')
      .set({ budget_cents: 100, daily_cap_cents: 1000 })
      .where('id', '=', c.keyId)
      .execute();
    const g = await startGateway(w.dataDir, {}, { workers: 2 });
    gateways.push(g);
    const { statuses } = await callMany([g.url], `/${w.slug}/users/1`, c.key, 200, 32);
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    const key = await w.h.db
      .selectFrom('api_keys')
      .select('spent_cents')
      .where('id', '=', c.keyId)
      .executeTakeFirstOrThrow();
    expect(key.spent_cents).toBe(100);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(10_000 - 100);
    await expectLedgerConsistent(w.h);
  }, 60_000);

  it('kill -9 of a gateway under load, then restart: balance, leases and usage reconcile to the cent', async () => {
    w = await makeWorld({ endpoints: [{ method: 'GET', path: '/users/{id}', priceCents: 1 }] });
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 5_000);
    const g1 = await startGateway(w.dataDir);
    gateways.push(g1);
    const agent = new Agent({ connections: 32 });
    const ok: string[] = [];
    let stop = false;
    const load = Promise.all(
      Array.from({ length: 32 }, async () => {
        while (!stop) {
          try {
            const r = await request(`${g1.url}/${w!.slug}/users/1`, {
              headers: { authorization: `Bearer ${c.key}` },
              dispatcher: agent,
            });
            await r.body.text();
            if (r.statusCode === 200) ok.push(String(r.headers['x-svc-request-id']));
          } catch {
            return; // the gateway died mid-call: that call was never answered
          }
        }
      }),
    );
    while (ok.length < 300) await new Promise((r) => setTimeout(r, 10));
    g1.child.kill('SIGKILL');
    await load;
    stop = true;
    await agent.close();

    const g2 = await startGateway(w.dataDir);
    gateways.push(g2);
    const bal = await balanceOf(w.h, c.orgId);
    expect(bal.reserved_cents).toBe(0);
    const open = await w.h.db.selectFrom('balance_leases').select('id').where('released_at', 'is', null).execute();
    expect(open).toHaveLength(0);
    await expectLedgerConsistent(w.h);
    // Every 2xx the client saw is charged exactly once (one usage row per request id), and nothing else was
    // charged: the ledger's call charges (per commit) sum to the usage rows (expectLedgerConsistent above).
    const usage = await w.h.db
      .selectFrom(usageWithIds(w.h.db))
      .select(['id', 'charged_cents'])
      .where('org_id', '=', c.orgId)
      .where('charged_cents', '>', 0)
      .execute();
    const charged = new Set(usage.map((u) => u.id));
    for (const id of ok) expect(charged.has(id)).toBe(true);
    expect(usage.every((u) => u.charged_cents === 1)).toBe(true);
    expect(bal.credit_cents).toBe(5_000 - usage.length);
    // Committed-but-unanswered calls (killed between COMMIT and write) may exist; answered-but-uncommitted may not.
    expect(usage.length - ok.length).toBeLessThanOrEqual(32);
    const spent = await w.h.db
      .selectFrom('balance_leases')
      .select((eb) => eb.fn.sum<number>('spent_cents').as('s'))
      .where('org_id', '=', c.orgId)
      .executeTakeFirstOrThrow();
    expect(Number(spent.s)).toBe(usage.length);
    // The restarted gateway serves and charges normally.
    const r = await request(`${g2.url}/${w.slug}/users/1`, { headers: { authorization: `Bearer ${c.key}` } });
    await r.body.text();
    expect(r.statusCode).toBe(200);
  }, 60_000);
});
