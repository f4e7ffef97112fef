/**
 * The things the bench loads, and the one-request check each must pass before it is measured: the stub's exact
 * body through every proxy, the price charged on the paid path, a 401 problem for an unknown key (the gateway's, and
 * HAProxy's, which must refuse a key not in its map).
 */
import { numOf } from '../core/db/id-nums.js';
import { openTestDb } from '../test/helpers/db.js';
import type { Pinned } from './procs.js';
import { PRICE_CENTS, type Seeded } from './setup.js';
import { STUB_BODY } from './stub-upstream.js';

/** The spin floor's busy CPU per request: about what the gateway's own code costs per call beyond the relay floor. */
export const SPIN_FLOOR_US = 40;

export type TargetId =
  | 'direct'
  | 'nginx'
  | 'haproxy'
  | 'fastify'
  | 'passthrough'
  | 'paid'
  | 'paid-fallback'
  | 'paid-pg'
  | 'commit-floor'
  | 'relay-floor'
  | 'metered-floor'
  | 'spin-floor'
  | 'unauth';

export interface Target {
  id: TargetId;
  label: string;
  url: string;
  headers: Record<string, string>;
  /** The server whose CPU per request is measured (the stub itself for `direct`). */
  sut: Pinned;
  expectStatus: number;
  /** Reads event-loop delay from the probe preloaded in this process. */
  eld: boolean;
  /** A server the target needs whose CPU is reported apart (the PostgreSQL postmaster and its backends). */
  backing?: { pid: number; label: string };
  /** Settled calls and the commits that carried them so far (the paid SQLite target): its calls per commit per run. */
  settleCounts?: () => SettleCounts;
}

export interface SettleCounts {
  calls: number;
  commits: number;
}

export const TARGET_LABELS: Record<TargetId, string> = {
  direct: 'upstream direct',
  nginx: 'nginx proxy_pass (keep-alive, 1 worker)',
  haproxy: 'HAProxy 2.6 with key map + per-key rate limit (1 thread)',
  fastify: '@fastify/http-proxy 11 (no metering)',
  passthrough: 'gateway pass-through (metering off)',
  paid: 'gateway full paid path',
  'paid-fallback': 'gateway full paid path, fallback HTTP server (JS, gateway/http-fallback.ts)',
  'paid-pg': 'gateway full paid path on PostgreSQL 15 (SVC_DATABASE_URL; server on the same box, unpinned)',
  'commit-floor': 'commit floor: uWS + one committed SQLite row per request, no proxying (bench/commit-floor.ts)',
  'relay-floor': 'relay floor: uWS + keep-alive net sockets, no svc logic (bench/relay-floor.ts)',
  'metered-floor':
    "metered relay floor: the relay floor + the key's SHA-256 + one SQLite row per call group-committed before the answer (bench/relay-floor.ts)",
  'spin-floor': `spin floor: the relay floor + ${SPIN_FLOOR_US} µs of busy user-space CPU per request (a calibrated loop; bench/relay-floor.ts)`,
  unauth: 'gateway 401 (unknown key)',
};

export interface CheckResult {
  ok: boolean;
  detail: string;
}

const BALANCE_HEADER = /balance|remaining/i;

function _balanceHeader(h: Headers): number | null {
  for (const [k, v] of h) if (k.startsWith('x-svc-') && BALANCE_HEADER.test(k) && /^-?\d+$/.test(v)) return Number(v);
  return null;
}

async function _usageRows(seed: Seeded): Promise<{ n: number; charged: number }> {
  const h = openTestDb(seed.dataDir);
  try {
    const r = await h.db
      .selectFrom('usage_calls')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('charged_cents').as('charged')])
      .where('key_num', '=', numOf(seed.keyId))
      .executeTakeFirstOrThrow();
    return { n: Number(r.n), charged: Number(r.charged ?? 0) };
  } finally {
    h.close();
  }
}

/** One request per target, checked for status and body; the paid path also for the charge and the usage row. */
export async function checkTarget(t: Target, paidSeed: Seeded | null): Promise<CheckResult> {
  try {
    const before = t.id === 'paid' && paidSeed ? await _usageRows(paidSeed) : null;
    const res = await fetch(t.url, { headers: t.headers });
    const body = await res.text();
    if (res.status !== t.expectStatus)
      return { ok: false, detail: `status ${res.status}, expected ${t.expectStatus}: ${body.slice(0, 300)}` };
    if (t.id === 'unauth') {
      const code = (JSON.parse(body) as { code?: string }).code;
      const ct = res.headers.get('content-type') ?? '';
      return code === 'unauthorized' && ct.includes('problem+json')
        ? { ok: true, detail: `401 ${ct} code=${code}` }
        : { ok: false, detail: `401 body not the unauthorized problem: ${ct} ${body.slice(0, 200)}` };
    }
    if (body !== STUB_BODY) return { ok: false, detail: `body differs from the stub's: ${body.slice(0, 200)}` };
    if (t.id === 'haproxy') {
      const refused = await fetch(t.url, { headers: { authorization: 'Bearer svc_live_not_in_the_map' } });
      await refused.text();
      return refused.status === 401
        ? { ok: true, detail: `200, stub body (${body.length} bytes); a key not in the map: 401` }
        : { ok: false, detail: `a key not in the map got ${refused.status}, expected 401` };
    }
    if (t.id !== 'paid' || !paidSeed || !before) return { ok: true, detail: `200, stub body (${body.length} bytes)` };
    const charged = res.headers.get('x-svc-charged-cents');
    if (charged !== String(PRICE_CENTS))
      return { ok: false, detail: `X-Svc-Charged-Cents=${charged}, expected ${PRICE_CENTS}` };
    // The balance drop: the remaining balance the gateway reports on a second call must be one price lower.
    const b1 = _balanceHeader(res.headers);
    const res2 = await fetch(t.url, { headers: t.headers });
    await res2.text();
    const b2 = _balanceHeader(res2.headers);
    const drop = b1 !== null && b2 !== null ? b1 - b2 : null;
    if (drop !== null && drop !== PRICE_CENTS)
      return { ok: false, detail: `balance header dropped ${drop}, expected ${PRICE_CENTS}` };
    // An answered call is a recorded call: both usage rows must be committed by now.
    const after = await _usageRows(paidSeed);
    if (after.n - before.n !== 2 || after.charged - before.charged !== 2 * PRICE_CENTS) {
      return {
        ok: false,
        detail: `usage rows +${after.n - before.n} charged +${after.charged - before.charged}, expected +2 / +${2 * PRICE_CENTS}`,
      };
    }
    return {
      ok: true,
      detail: `200, stub body, X-Svc-Charged-Cents=${charged}, balance header ${drop === null ? 'absent' : `dropped ${drop}`}, 2 usage rows charging ${after.charged - before.charged}`,
    };
  } catch (e) {
    return { ok: false, detail: (e as Error).message };
  }
}
