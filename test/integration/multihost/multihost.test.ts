/**
 * svc on several "hosts" (network namespaces, root only): PostgreSQL on one, the control plane and MCP on another,
 * three gateways on three more, load from the root namespace over a bridge (scale-out-notes §3; docs/scale-out.md).
 * Each failure runs under paid load with a unique Idempotency-Key per logical call; calls that failed are retried
 * once on a healthy gateway with the same key. After each: every 200 charged exactly once and no logical call
 * charged twice (usage rows mapped to logical calls through the request ids the upstream saw), no credit left in
 * a dead holder's leases after the stale bound, the ledger check exact and balances equal ledger sums.
 * Every address is 10.210.0.0/24 inside namespaces this file makes and deletes; every loop is bounded.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, postgresAvailable, type PgCluster } from '../../helpers/postgres.js';
import { baseEnv, startProcess, tempDataDir, type RunningProcess } from '../../helpers/processes.js';
import { grantCredits, seedListing, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { openPostgres, type PgHandles } from '../../../core/db/database.js';
import { migrateToLatest } from '../../../core/db/migrate.js';
import { checkBooks } from '../../../control/ledger/books.service.js';
import { Pg, sql } from '../../../gateway/pg/connect.js';
import { moneyProblems } from '../../unit/gateway/pg/pg-kit.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const NET = '10.210.0';
const ID = (process.pid % 1296).toString(36);
const SW = `svc${ID}-sw`;
const HOSTS = { db: 1, ctl: 2, gw1: 3, gw2: 4, gw3: 5 } as const;
type Host = keyof typeof HOSTS;
const ns = (h: Host) => `svc${ID}-${h}`;
const ROOT_LEG = `vh${ID}root`;
const STALE_MS = 3_000;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'pipe', timeout: 10_000 });
}

/** Why this file cannot run here, or null. */
function unavailable(): string | null {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'needs root on Linux (ip netns)';
  if (!postgresAvailable()) return 'PostgreSQL 15 binaries not found (Debian postgresql-15)';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'pipe' });
  } catch {
    return 'iproute2 `ip netns` not available';
  }
  return null;
}
const why = unavailable();
if (why) process.stderr.write(`multihost test skipped: ${why}\n`);

let made = false;
function makeNetwork(): void {
  made = true;
  ip('netns', 'add', SW);
  ip('-n', SW, 'link', 'add', 'br0', 'type', 'bridge');
  ip('-n', SW, 'link', 'set', 'br0', 'up');
  ip('-n', SW, 'link', 'set', 'lo', 'up');
  for (const [h, i] of Object.entries(HOSTS) as [Host, number][]) {
    const vh = `vh${ID}${h}`;
    const vs = `vs${ID}${h}`;
    ip('link', 'add', vh, 'type', 'veth', 'peer', 'name', vs);
    ip('link', 'set', vs, 'netns', SW);
    ip('-n', SW, 'link', 'set', vs, 'master', 'br0', 'up');
    ip('netns', 'add', ns(h));
    ip('link', 'set', vh, 'netns', ns(h));
    ip('-n', ns(h), 'addr', 'add', `${NET}.${i}/24`, 'dev', vh);
    ip('-n', ns(h), 'link', 'set', 'lo', 'up');
    ip('-n', ns(h), 'link', 'set', vh, 'up');
  }
  const vs = `vs${ID}root`;
  ip('link', 'add', ROOT_LEG, 'type', 'veth', 'peer', 'name', vs);
  ip('link', 'set', vs, 'netns', SW);
  ip('-n', SW, 'link', 'set', vs, 'master', 'br0', 'up');
  ip('addr', 'add', `${NET}.254/24`, 'dev', ROOT_LEG);
  ip('link', 'set', ROOT_LEG, 'up');
}

function deleteNetwork(): void {
  if (!made) return;
  for (const h of Object.keys(HOSTS) as Host[]) {
    try {
      ip('netns', 'del', ns(h));
    } catch {}
  }
  try {
    ip('link', 'del', ROOT_LEG);
  } catch {}
  try {
    ip('netns', 'del', SW);
  } catch {}
}

/** The provider's upstream, in the root namespace: counts hits per logical call and remembers request ids. */
interface Upstream {
  url: string;
  /** request id (x-svc-request-id) → logical call id (the path's last segment). */
  byRequest: Map<string, string>;
  hits: Map<string, number>;
  close(): Promise<void>;
}
async function startUpstream(): Promise<Upstream> {
  const byRequest = new Map<string, string>();
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const logical = (req.url ?? '').split('/').pop() ?? '';
    byRequest.set(String(req.headers['x-svc-request-id'] ?? ''), logical);
    hits.set(logical, (hits.get(logical) ?? 0) + 1);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"ok":"${logical}"}`);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, `${NET}.254`, r));
  return {
    url: `http://${NET}.254:${(server.address() as AddressInfo).port}`,
    byRequest,
    hits,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let data: ReturnType<typeof tempDataDir>;
let cluster: PgCluster;
let h: PgHandles;
let pg: Pg;
let up: Upstream;
let env: Record<string, string>;
let control: RunningProcess;
let mcp: RunningProcess;
const gws: Partial<Record<'gw1' | 'gw2' | 'gw3', RunningProcess>> = {};
let slug: string;

async function startGw(host: 'gw1' | 'gw2' | 'gw3'): Promise<RunningProcess> {
  const p = await startProcess(
    host,
    'gateway/main.js',
    { ...env, SVC_HOST: `${NET}.${HOSTS[host]}`, SVC_GATEWAY_WORKERS: '1' },
    { netns: ns(host), timeoutMs: 60_000 },
  );
  gws[host] = p;
  return p;
}

beforeAll(async () => {
  if (why) return;
  makeNetwork();
  data = tempDataDir();
  cluster = await startPostgres({
    listen: `${NET}.${HOSTS.db}`,
    port: 5432,
    netns: ns('db'),
    hba: [`host all all ${NET}.0/24 trust`],
  });
  const url = await cluster.createDatabase('svc');
  h = openPostgres(url, { max: 2 });
  await migrateToLatest(h.db);
  pg = new Pg(url, { max: 2 });
  up = await startUpstream();
  const provider = await seedOrg(h);
  slug = `mh-${ID}`;
  await seedListing(h, {
    orgId: provider.orgId,
    slug,
    baseUrl: up.url,
    endpoints: [{ method: 'GET', path: '/one/{id}', priceCents: 1 }],
  });
  env = baseEnv(data.dir, {
    SVC_DATABASE_URL: url,
    SVC_GATEWAY_HEARTBEAT_MS: '250',
    SVC_GATEWAY_STALE_MS: String(STALE_MS),
    SVC_GATEWAY_POLL_MS: '200',
    SVC_GATEWAY_DEFAULT_RATE_PER_MIN: '1000000',
    SVC_LOG_LEVEL: 'error',
  });
  control = await startProcess(
    'control',
    'control/main.js',
    { ...env, SVC_HOST: `${NET}.${HOSTS.ctl}` },
    {
      netns: ns('ctl'),
      timeoutMs: 60_000,
    },
  );
  await Promise.all([startGw('gw1'), startGw('gw2'), startGw('gw3')]);
  // MCP on the control plane's host, its call_api through the first gateway across the bridge.
  mcp = await startProcess(
    'mcp',
    'mcp/main.js',
    { ...env, SVC_HOST: `${NET}.${HOSTS.ctl}`, SVC_PUBLIC_URL: control.url, SVC_GATEWAY_URL: gws.gw1!.url },
    { netns: ns('ctl'), timeoutMs: 60_000 },
  );
}, 240_000);

afterAll(async () => {
  for (const g of Object.values(gws)) await g?.stop('SIGKILL');
  await mcp?.stop();
  await control?.stop();
  await up?.close();
  await pg?.end();
  await h?.close();
  await cluster?.stop().catch(() => {});
  deleteNetwork();
  data?.cleanup();
}, 60_000);

interface Outcome {
  logical: string;
  status: number; // 0: no answer (connection refused, reset, timeout)
  requestId: string | null;
}

async function paid(base: string, key: string, logical: string, timeoutMs = 4_000): Promise<Outcome> {
  try {
    const res = await fetch(`${base}/${slug}/one/${logical}`, {
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': logical },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer();
    return { logical, status: res.status, requestId: res.headers.get('x-svc-request-id') };
  } catch {
    return { logical, status: 0, requestId: null };
  }
}

/**
 * Paid load from `workers` loops over the three gateways (round robin), each logical call once, until `ms` passed
 * (bounded by count too); `during` runs alongside. Then every call without a 2xx/4xx answer is retried once on a
 * live gateway with its Idempotency-Key.
 */
async function load(
  org: SeededOrg,
  tag: string,
  o: { ms: number; during: () => Promise<void>; retryOn: () => string[] },
): Promise<Map<string, Outcome>> {
  const out = new Map<string, Outcome>();
  const urls = (['gw1', 'gw2', 'gw3'] as const).map((g) => gws[g]!.url);
  const t0 = Date.now();
  let n = 0;
  const worker = async (w: number) => {
    for (let i = 0; i < 2_000 && Date.now() - t0 < o.ms; i++) {
      const logical = `${tag}-${w}-${i}`;
      out.set(logical, await paid(urls[n++ % 3]!, org.key, logical));
    }
  };
  await Promise.all([...Array.from({ length: 12 }, (_, w) => worker(w)), o.during()]);
  const retry = o.retryOn();
  let k = 0;
  for (const [logical, r] of out) {
    if (r.status !== 0 && r.status < 500) continue;
    const again = await paid(retry[k++ % retry.length]!, org.key, logical);
    out.set(logical, again.status === 0 || again.status >= 500 ? r : again);
  }
  return out;
}

/** The invariants after a failure; returns the number of 200s. */
async function checkAfter(org: SeededOrg, out: Map<string, Outcome>): Promise<number> {
  // Charged usage rows of this org, mapped to logical calls by the request id the upstream saw.
  const rows = await pg.rows<{ id: string }>(
    sql`SELECT id FROM usage_events WHERE org_id = ${org.orgId} AND charged_cents > 0`,
  );
  const charges = new Map<string, number>();
  for (const r of rows) {
    const logical = up.byRequest.get(r.id);
    expect(logical, `usage row ${r.id} has no upstream request`).toBeDefined();
    charges.set(logical!, (charges.get(logical!) ?? 0) + 1);
  }
  // No logical call (one Idempotency-Key) charged twice.
  expect([...charges.values()].filter((c) => c > 1)).toEqual([]);
  let ok = 0;
  for (const [logical, r] of out) {
    if (r.status !== 200) continue;
    ok++;
    expect(charges.get(logical), `200 for ${logical} charged once`).toBe(1);
  }
  // A charged call reached the upstream; a logical call answered 200 on its first try reached it exactly once.
  for (const logical of charges.keys()) expect(up.hits.get(logical) ?? 0).toBeGreaterThanOrEqual(1);
  // No credit stranded: after the stale bound every dead holder's leases are released (the reaper on a live node).
  const stranded = async () =>
    (
      await pg.rows<{ n: number }>(sql`
        SELECT count(*) AS n FROM balance_leases l JOIN gateway_instances g ON g.id = l.holder_id
        WHERE l.released_at IS NULL AND g.stopped_at IS NOT NULL`)
    )[0]!.n;
  const deadline = Date.now() + STALE_MS * 4;
  while ((await stranded()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  expect(await stranded()).toBe(0);
  expect(await moneyProblems(pg)).toEqual([]);
  const books = await checkBooks(h.db);
  expect(books.ok, JSON.stringify(books)).toBe(true);
  return ok;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const live = () =>
  (['gw1', 'gw2', 'gw3'] as const).filter((g) => gws[g]!.child.exitCode === null && gws[g]!.child.signalCode === null);

/**
 * A gateway that found itself reaped (stopped past the stale bound: partitioned, or PostgreSQL down that long)
 * exits 1 by design; with one worker nothing restarts it, so the test does, as a supervisor would.
 */
async function ensureGateways(): Promise<string[]> {
  const restarted: string[] = [];
  for (const g of ['gw1', 'gw2', 'gw3'] as const) {
    if (gws[g]!.child.exitCode === null && gws[g]!.child.signalCode === null) continue;
    restarted.push(g);
    await startGw(g);
  }
  return restarted;
}

async function consumer(cents: number): Promise<SeededOrg> {
  const org = await seedOrg(h);
  await grantCredits(h, org.orgId, cents);
  return org;
}

describe.skipIf(why)('multi-host: PostgreSQL, control plane, three gateways in network namespaces', () => {
  it('every process answers on its namespace address', async () => {
    expect(control.url).toContain(`${NET}.${HOSTS.ctl}`);
    expect((await fetch(`${control.url}/healthz`)).status).toBe(200);
    for (const g of ['gw1', 'gw2', 'gw3'] as const) {
      expect(gws[g]!.url).toContain(`${NET}.${HOSTS[g]}`);
      expect((await fetch(`${gws[g]!.url}/healthz`)).status).toBe(200);
    }
  });

  it('MCP on the control host, on PostgreSQL: a paid call_api through a gateway is charged once, books exact', async () => {
    const org = await consumer(10);
    const transport = new StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${org.key}` } },
    });
    const client = new Client({ name: 'multihost', version: '1.0.0' });
    await client.connect(transport);
    try {
      const call = await client.callTool({
        name: 'call_api',
        arguments: { slug, endpoint: '/one/{id}', input: { id: `mcp-${ID}` } },
      });
      expect(call.structuredContent).toMatchObject({ status: 200, charged_cents: 1, balance_cents: 9 });
      const bal = await client.callTool({ name: 'get_balance', arguments: {} });
      expect(bal.structuredContent).toMatchObject({ credit_cents: 9 });
    } finally {
      await client.close();
    }
    expect(up.hits.get(`mcp-${ID}`)).toBe(1);
    expect(await moneyProblems(pg)).toEqual([]);
  });

  it('kill -9 of one gateway mid-load: every 200 charged once, its leases reaped, books exact', async () => {
    await ensureGateways();
    const org = await consumer(100_000);
    const out = await load(org, 'k9', {
      ms: 4_000,
      during: async () => {
        await sleep(1_500);
        gws.gw1!.child.kill('SIGKILL');
      },
      retryOn: () => live().map((g) => gws[g]!.url),
    });
    const ok = await checkAfter(org, out);
    expect(ok).toBeGreaterThan(50);
    await startGw('gw1');
  }, 120_000);

  it('link of one gateway cut for 10 s (switch end down) and restored: charged once, no stranded credit, books exact', async () => {
    await ensureGateways();
    const org = await consumer(100_000);
    const out = await load(org, 'cut', {
      ms: 13_000,
      during: async () => {
        await sleep(1_000);
        ip('-n', SW, 'link', 'set', `vs${ID}gw2`, 'down');
        await sleep(10_000);
        ip('-n', SW, 'link', 'set', `vs${ID}gw2`, 'up');
      },
      retryOn: () => ['gw1', 'gw3'].map((g) => gws[g as 'gw1']!.url),
    });
    const ok = await checkAfter(org, out);
    expect(ok).toBeGreaterThan(50);
    // Reaped while cut off, the healed gateway finds its holder stopped and exits; a new one takes its place.
    const t0 = Date.now();
    while (gws.gw2!.child.exitCode === null && Date.now() - t0 < 10_000) await sleep(100);
    if (gws.gw2!.child.exitCode === null) await gws.gw2!.stop('SIGKILL');
    await startGw('gw2');
  }, 180_000);

  it('PostgreSQL crash-restarted mid-load: charged once, paid calls resume by themselves, books exact', async () => {
    await ensureGateways();
    const org = await consumer(100_000);
    const out = await load(org, 'pgr', {
      ms: 6_000,
      during: async () => {
        await sleep(1_500);
        await cluster.restart('immediate');
      },
      retryOn: () => live().map((g) => gws[g]!.url),
    });
    await checkAfter(org, out);
    // Paid calls resume on every gateway: by itself where the gateway outlived the outage, through a restart
    // where it was reaped meanwhile (heartbeats stopped for longer than the stale bound) and exited.
    await ensureGateways();
    for (const g of live()) {
      const deadline = Date.now() + 10_000;
      let r = await paid(gws[g]!.url, org.key, `after-${g}`);
      while (r.status !== 200 && Date.now() < deadline) {
        await sleep(200);
        r = await paid(gws[g]!.url, org.key, `after-${g}-${Date.now()}`);
      }
      expect(r.status).toBe(200);
    }
  }, 180_000);

  it('1,000 concurrent paid calls across the three gateways against 400 cents at 1 cent: exactly 400 succeed', async () => {
    await ensureGateways();
    const org = await consumer(400);
    const urls = (['gw1', 'gw2', 'gw3'] as const).map((g) => gws[g]!.url);
    const out = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) => paid(urls[i % 3]!, org.key, `thousand-${i}`, 30_000)),
    );
    const by = new Map<number, number>();
    for (const r of out) by.set(r.status, (by.get(r.status) ?? 0) + 1);
    expect(Object.fromEntries(by)).toEqual({ 200: 400, 402: 600 });
    await checkAfter(org, new Map(out.map((r) => [r.logical, r])));
    const [b] = await pg.rows<{ ledger: number }>(sql`
      SELECT COALESCE(sum(amount_cents), 0)::bigint AS ledger FROM ledger_entries WHERE org_id = ${org.orgId} AND status = 'settled'`);
    expect(b!.ledger).toBe(0);
  }, 120_000);
});
