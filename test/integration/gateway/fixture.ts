/**
 * Shared arrangement for gateway tests: a local upstream (node:http, the "outside world"), a temp data dir with
 * the schema migrated, a provider listing pointing at the upstream, and helpers to read ledger/usage state.
 */
import { afterAll, beforeAll } from 'vitest';
import { sql } from 'kysely';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openMigratedTempDb, seedListing, seedOrg, type SeededOrg, type SeedEndpoint } from '../../helpers/db.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { loadSecretKey } from '../../../core/secret-key.js';
import { loadConfig } from '../../../core/config.js';
import { DAY_MS } from '../../../core/clock.js';
import type { DbHandles } from '../../../core/db/database.js';
import { recordChange } from '../../../core/db/changes.js';
import { newId } from '../../../core/ids.js';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Upstream {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** Routes: /users/{id} (JSON echo), /echo (body echo), /fail (500), /slow (answers after 3 s), /big?mb=N (streams N MB). */
export async function startUpstream(): Promise<Upstream> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/fail') {
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end('{"upstream":"boom"}');
      }
      if (u.pathname === '/slow') {
        const t = setTimeout(() => res.end('late'), 3000);
        res.on('close', () => clearTimeout(t));
        return;
      }
      if (u.pathname === '/big') {
        const total = Number(u.searchParams.get('mb') ?? '1') * 1024 * 1024;
        const chunk = Buffer.alloc(64 * 1024, 97);
        let sent = 0;
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
        const pump = () => {
          while (sent < total) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        return pump();
      }
      if (u.pathname === '/teapot') {
        res.writeHead(418, { 'content-type': 'text/plain', 'x-upstream': 'yes' });
        return res.end('short and stout');
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(JSON.stringify({ path: u.pathname, query: u.search, method: req.method, body }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const DEFAULT_ENDPOINTS: SeedEndpoint[] = [
  { method: 'GET', path: '/users/{id}', priceCents: 3 },
  { method: 'POST', path: '/echo', priceCents: 2 },
  { method: 'GET', path: '/free', priceCents: 0 },
  { method: 'GET', path: '/fail', priceCents: 5 },
  { method: 'GET', path: '/slow', priceCents: 5 },
  { method: 'GET', path: '/big', priceCents: 1 },
  { method: 'GET', path: '/teapot', priceCents: 1 },
];

export interface World {
  dataDir: string;
  h: DbHandles;
  upstream: Upstream;
  provider: SeededOrg;
  apiId: string;
  endpointIds: string[];
  slug: string;
  secretKey: Buffer;
  cleanup(): Promise<void>;
}

export async function makeWorld(
  opts: {
    endpoints?: SeedEndpoint[];
    injection?: 'none' | 'bearer' | 'header' | 'query';
    injectionName?: string;
    secret?: string;
  } = {},
): Promise<World> {
  const data = await openMigratedTempDb();
  const h = data.h;
  const upstream = await startUpstream();
  const provider = await seedOrg(h);
  const secretKey = loadSecretKey(loadConfig({ SVC_DATA_DIR: data.dir }));
  const slug = `api-${Math.random().toString(36).slice(2, 8)}`;
  const { apiId, endpointIds } = await seedListing(h, {
    orgId: provider.orgId,
    slug,
    baseUrl: upstream.url,
    endpoints: opts.endpoints ?? DEFAULT_ENDPOINTS,
    injection: opts.injection ?? 'bearer',
    injectionName: opts.injectionName,
    secret: opts.secret ?? 'provider-secret-123',
    secretKey,
  });
  return {
    dataDir: data.dir,
    h,
    upstream,
    provider,
    apiId,
    endpointIds,
    slug,
    secretKey,
    async cleanup() {
      await upstream.close();
      await data.close();
    },
  };
}

/**
 * Exact reads of what a paid call moves, on either store. On PostgreSQL a settle batch bumps only its lease row's
 * `unfolded_cents`; `balances`, `api_keys.spent_cents` and `key_daily_spend` catch up at the next fold
 * (gateway/pg/fold.ts), so an exact read adds the open leases' unfolded spend (credit and reserved both still hold
 * it; docs/scale-out.md "The fold"), in the same statement: one snapshot, so a fold between two reads cannot count
 * a charge twice or not at all. On SQLite the sum is always 0.
 */
function _unfolded(col: 'org_id' | 'key_id', id: string, day?: number) {
  return sql<number>`COALESCE((SELECT SUM(l.unfolded_cents) FROM balance_leases l
    WHERE ${sql.ref(`l.${col}`)} = ${id} AND l.released_at IS NULL
    ${day === undefined ? sql`` : sql`AND l.day = ${day}`}), 0)`;
}

export async function balanceOf(
  h: DbHandles,
  orgId: string,
): Promise<{ credit_cents: number; reserved_cents: number }> {
  const u = _unfolded('org_id', orgId);
  const row = await h.db
    .selectFrom('balances')
    .select([
      sql<number>`credit_cents - ${u}`.as('credit_cents'),
      sql<number>`reserved_cents - ${u}`.as('reserved_cents'),
    ])
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return { credit_cents: Number(row.credit_cents), reserved_cents: Number(row.reserved_cents) };
}

/** A key's lifetime spend (`api_keys.spent_cents` plus its open leases' unfolded spend). */
export async function keySpentOf(h: DbHandles, keyId: string): Promise<number> {
  const row = await h.db
    .selectFrom('api_keys')
    .select(sql<number>`spent_cents + ${_unfolded('key_id', keyId)}`.as('s'))
    .where('id', '=', keyId)
    .executeTakeFirstOrThrow();
  return Number(row.s);
}

/** A key's spend on UTC day `day` (`key_daily_spend` plus its open leases' unfolded spend of that day). */
export async function daySpentOf(h: DbHandles, keyId: string, day: number): Promise<number> {
  const row = await sql<{ s: number }>`SELECT COALESCE((SELECT spent_cents FROM key_daily_spend
      WHERE key_id = ${keyId} AND day = ${day}), 0) + ${_unfolded('key_id', keyId, day)} AS s`.execute(h.db);
  return Number(row.rows[0]!.s);
}

export async function gw(
  base: string,
  method: string,
  path: string,
  opts: { key?: string; headers?: Record<string, string>; body?: string } = {},
) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers['authorization'] = `Bearer ${opts.key}`;
  const res = await fetch(base + path, { method, headers, body: opts.body });
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json, code: json?.code as string | undefined };
}

/** Waits until the gateway has applied every `changes` row written so far (deterministic, unlike a sleep). */
export async function feedApplied(h: DbHandles, gatewayUrl: string, timeoutMs = 5000): Promise<void> {
  const target =
    (
      await h.db
        .selectFrom('changes')
        .select((eb) => eb.fn.max<number>('seq').as('m'))
        .executeTakeFirst()
    )?.m ?? 0;
  const t0 = Date.now();
  for (;;) {
    const health = (await (await fetch(`${gatewayUrl}/healthz`)).json()) as { changes_seq: number };
    if (health.changes_seq >= target) return;
    if (Date.now() - t0 > timeoutMs) throw new Error(`gateway feed at ${health.changes_seq}, expected ${target}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Polls `f` every 25 ms until it holds; the last attempt always starts after `ms`. A bound such as "refused within
 * 1 s" is so judged by a call made after the bound, never by one that was in flight (or queued behind a busy CPU)
 * when the bound passed and so was legitimately answered from the state before the change.
 */
export async function until(f: () => Promise<boolean>, ms = 1000): Promise<boolean> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (await f()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return f();
}

/**
 * Daily caps count per UTC day and volume tiers per UTC month (gateway: utcDay, monthStartOf). A test that makes a
 * few calls and expects the Nth to be refused or discounted must not straddle a UTC midnight (CI often runs nightly
 * at 00:00 UTC): this waits out the last `marginMs` of a UTC day.
 */
export async function clearOfUtcMidnight(marginMs = 10_000): Promise<void> {
  const left = DAY_MS - (Date.now() % DAY_MS);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

/** One world and one gateway for a whole test file, torn down after it; `bind` receives them once started. */
export function useGatewayWorld(
  bind: (w: World, g: RunningGateway) => void,
  opts: Parameters<typeof makeWorld>[0] = {},
): void {
  let w: World | undefined;
  let g: RunningGateway | undefined;
  beforeAll(async () => {
    w = await makeWorld(opts);
    g = await startGateway(w.dataDir);
    bind(w, g);
  });
  afterAll(async () => {
    await g?.stop();
    await w?.cleanup();
  });
}

/** Activates a `required` terms document on the world's listing (as the provider would) and waits for the gateway. */
export async function activateRequiredTerms(w: World, gatewayUrl: string): Promise<string> {
  const docId = newId('doc');
  const now = Date.now();
  await w.h.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('legal_documents')
      .values({
        id: docId,
        org_id: w.provider.orgId,
        api_id: w.apiId,
        kind: 'terms',
        source: 'hosted',
        version: '1.0.0',
        markdown: '# Terms',
        acceptance_mode: 'required',
        status: 'activated',
        created_at: now,
        activated_at: now,
      })
      .execute();
    await recordChange(trx, 'terms', w.apiId, now);
  });
  await feedApplied(w.h, gatewayUrl);
  return docId;
}

/** Makes a document optional again so later tests of the file are not blocked by it. */
export async function retireTerms(w: World, gatewayUrl: string, docId: string): Promise<void> {
  await w.h.db.transaction().execute(async (trx) => {
    await trx.updateTable('legal_documents').set({ acceptance_mode: 'optional' }).where('id', '=', docId).execute();
    await recordChange(trx, 'terms', w.apiId, Date.now());
  });
  await feedApplied(w.h, gatewayUrl);
}
