import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { makeWorld, gw, balanceOf, type World } from './fixture.js';
import { startGateway, WORKERS_SHARE_PORT, type RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, grantCredits, expectLedgerConsistent, usageWithIds } from '../../helpers/db.js';

let w: World | undefined;
const gateways: RunningGateway[] = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.stop('SIGTERM');
  await w?.cleanup();
  w = undefined;
});

describe('gateway lifecycle', () => {
  it('SIGTERM drains, returns its leases, marks the holder stopped and exits 0', async () => {
    w = await makeWorld();
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 1000);
    const g = await startGateway(w.dataDir);
    gateways.push(g);
    expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key })).status).toBe(200);
    expect((await balanceOf(w.h, c.orgId)).reserved_cents).toBeGreaterThan(0);
    expect(await g.stop('SIGTERM')).toBe(0);
    expect(await balanceOf(w.h, c.orgId)).toEqual({ credit_cents: 997, reserved_cents: 0 });
    const inst = await w.h.db.selectFrom('gateway_instances').select(['stopped_at']).execute();
    expect(inst.every((i) => i.stopped_at !== null)).toBe(true);
    await expectLedgerConsistent(w.h);
  });

  it('SVC_GATEWAY_SERVER=native where no native uWS build loads refuses to start and says what would make one load', async () => {
    w = await makeWorld();
    const env = { SVC_GATEWAY_SERVER: 'native', UWS_USE_FALLBACK: '1' };
    await expect(startGateway(w.dataDir, env)).rejects.toThrow(
      /exited with 1 before ready[\s\S]*refusing to start: SVC_GATEWAY_SERVER=native, but no native uWS build loads here[\s\S]*What would: unset UWS_USE_FALLBACK/,
    );
    // The supervisor refuses once, before it forks a worker that would be refused over and over.
    const t0 = Date.now();
    await expect(startGateway(w.dataDir, env, { workers: 2 })).rejects.toThrow(/exited with 1 before ready/);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('with no native build loading, auto runs the fallback server, says so in one line, and charges a paid call', async () => {
    w = await makeWorld();
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 1000);
    const g = await startGateway(w.dataDir, {
      SVC_GATEWAY_SERVER: 'auto',
      UWS_USE_FALLBACK: '1',
      SVC_LOG_LEVEL: 'info',
    });
    gateways.push(g);
    const health = (await (await fetch(`${g.url}/healthz`)).json()) as { native: boolean; server: string };
    expect(health).toMatchObject({ native: false, server: 'fallback' });
    const lines = g
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"http server: '));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      lvl: 'warn',
      server: 'fallback',
      why: expect.stringContaining('UWS_USE_FALLBACK is set'),
      cost: expect.stringContaining('more CPU per call'),
    });
    expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key })).status).toBe(200);
    expect(await g.stop('SIGTERM')).toBe(0);
    expect(await balanceOf(w.h, c.orgId)).toEqual({ credit_cents: 997, reserved_cents: 0 });
    await expectLedgerConsistent(w.h);
  });

  it('a worker whose supervisor-picked port was taken meanwhile exits at once (75), so the supervisor picks another', async () => {
    w = await makeWorld();
    // Someone else took the port between the supervisor's pick and the worker's listen.
    const squatter = createServer();
    await new Promise<void>((res) => squatter.listen(0, '127.0.0.1', res));
    const port = (squatter.address() as AddressInfo).port;
    try {
      const t0 = Date.now();
      const env = {
        SVC_GATEWAY_WORKER_INDEX: '0',
        SVC_GATEWAY_WORKER_PORT: String(port),
        SVC_GATEWAY_WORKER_PORT_PICKED: '1',
      };
      await expect(startGateway(w.dataDir, env)).rejects.toThrow(
        /exited with 75 before ready[\s\S]*picked port was taken/,
      );
      // Not the two-minute retry a fixed, configured port gets.
      expect(Date.now() - t0).toBeLessThan(15_000);
    } finally {
      squatter.close();
    }
  });

  it.skipIf(!WORKERS_SHARE_PORT)(
    'with several workers, a worker that can never start makes the supervisor give up instead of looping',
    async () => {
      w = await makeWorld();
      const t0 = Date.now();
      // Workers (not the supervisor) exit at once: node flags are inherited by forked workers.
      const workersDie = '--import=data:text/javascript,if(process.env.SVC_GATEWAY_WORKER_INDEX)process.exit(1)';
      const env = { SVC_GATEWAY_EXEC_ARGV: workersDie };
      await expect(startGateway(w.dataDir, env, { workers: 2, timeoutMs: 30_000 })).rejects.toThrow(
        /exited with 1 before ready[\s\S]*worker keeps exiting before it listens; giving up/,
      );
      // Five attempts with a doubling backoff (0.2 + 0.4 + 0.8 + 1.6 s), not forever.
      expect(Date.now() - t0).toBeLessThan(25_000);
    },
    40_000,
  );

  it('metering off is a pass-through: no key needed, nothing recorded', async () => {
    w = await makeWorld();
    const g = await startGateway(w.dataDir, { SVC_GATEWAY_METERING: 'off' });
    gateways.push(g);
    const r = await gw(g.url, 'GET', `/${w.slug}/users/5?z=1`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ path: '/users/5', query: '?z=1' });
    expect((await gw(g.url, 'GET', '/nope/x')).code).toBe('listing_not_found');
    const usage = await w.h.db.selectFrom(usageWithIds(w.h.db)).select('id').execute();
    expect(usage).toHaveLength(0);
  });

  it.skipIf(!WORKERS_SHARE_PORT)(
    'a worker killed with -9 is restarted by the supervisor and its leases come back',
    async () => {
      w = await makeWorld({ endpoints: [{ method: 'GET', path: '/users/{id}', priceCents: 1 }] });
      const c = await seedOrg(w.h);
      await grantCredits(w.h, c.orgId, 3000);
      const g = await startGateway(w.dataDir, {}, { workers: 2 });
      gateways.push(g);
      const agent = new Agent({ connections: 16 });
      const ok: string[] = [];
      const burst = async (url: string, n: number) => {
        for (let i = 0; i < n; i++) {
          try {
            const r = await request(`${url}/${w!.slug}/users/1`, {
              headers: { authorization: `Bearer ${c.key}` },
              dispatcher: agent,
            });
            await r.body.text();
            if (r.statusCode === 200) ok.push(String(r.headers['x-svc-request-id']));
          } catch {
            return;
          }
        }
      };
      const victim = g.workerPids[1]!;
      const load = Promise.all(Array.from({ length: 8 }, () => burst(g.url, 200)));
      while (ok.length < 100) await new Promise((r) => setTimeout(r, 10));
      process.kill(victim, 'SIGKILL');
      await load;
      await agent.close();
      // The surviving worker reaps the dead holder (its pid is gone) on its next housekeeping tick.
      const openOfDead = () =>
        w!.h.db
          .selectFrom('balance_leases')
          .innerJoin('gateway_instances', 'gateway_instances.id', 'balance_leases.holder_id')
          .select('balance_leases.id')
          .where('gateway_instances.pid', '=', victim)
          .where('balance_leases.released_at', 'is', null)
          .execute();
      for (let i = 0; i < 50 && (await openOfDead()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await openOfDead()).toHaveLength(0);
      // The supervisor restarts the worker (it may wait for the old port's TIME_WAIT sockets before it listens).
      await new Promise((r) => setTimeout(r, 300));
      expect(g.stderr()).toContain('worker exited; restarting');
      // Every 2xx the client saw is a charged usage row; the books (ledger = usage = balance) hold.
      const usage = await w.h.db
        .selectFrom(usageWithIds(w.h.db))
        .select('id')
        .where('org_id', '=', c.orgId)
        .where('charged_cents', '>', 0)
        .execute();
      const charged = new Set(usage.map((u) => u.id));
      for (const id of ok) expect(charged.has(id)).toBe(true);
      expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(3000 - usage.length);
      await expectLedgerConsistent(w.h);
      expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key })).status).toBe(200);
    },
    60_000,
  );
});
