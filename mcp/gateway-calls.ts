/**
 * `call_api` and `run_probe` go through the gateway over HTTP with the caller's key, so metering, caps, 402, 428,
 * idempotency and refunds live in one place. The answer is summarised for an agent: status, the headers that
 * matter, the body as text (or base64) capped at BODY_CAP bytes, price charged and balance left.
 */
import { Pool } from 'undici';
import { createHash } from 'node:crypto';

export const BODY_CAP = 64 * 1024;
const KEPT_HEADERS = ['content-type', 'content-length', 'retry-after', 'location', 'etag', 'cache-control'];

export interface GatewayCall {
  key: string;
  slug: string;
  method: string;
  /** Endpoint path with parameters filled in, starting with `/`. */
  path: string;
  query: Record<string, string>;
  body: unknown;
  idempotencyKey: string;
  maxPriceCents: number | undefined;
}

export interface GatewayAnswer {
  status: number;
  headers: Record<string, string>;
  /** Set when the gateway itself refused (problem+json with our `code` and the call's request id). */
  problem: Record<string, unknown> | null;
  body: string;
  body_encoding: 'utf8' | 'base64';
  body_truncated: boolean;
  body_bytes: number;
  request_id: string | null;
  price_cents: number | null;
  charged_cents: number;
  balance_cents: number | null;
  idempotent_replay: boolean;
}

export interface GatewayCalls {
  call(c: GatewayCall): Promise<GatewayAnswer>;
  close(): Promise<void>;
}

/** Same JSON-RPC request (id and arguments) in the same session → same key, so a client's retry is charged once. */
export function idempotencyKeyOf(scope: string, rpcId: string | number, tool: string, args: unknown): string {
  const h = createHash('sha256')
    .update(JSON.stringify([scope, String(rpcId), tool, args]))
    .digest('base64url');
  return `mcp_${h.slice(0, 40)}`;
}

const num = (v: string | undefined): number | null => (v === undefined || v === '' ? null : Number(v));
const TEXTUAL = /^(text\/|application\/(json|problem\+json|xml|javascript|x-www-form-urlencoded)|[^;]*\+(json|xml))/i;

export function createGatewayCalls(gatewayUrl: string): GatewayCalls {
  const base = gatewayUrl.replace(/\/+$/, '');
  // One keep-alive pool to the one gateway origin: no per-call origin lookup or URL re-parse in undici.
  const pool = new Pool(new URL(base).origin, { connections: 128, keepAliveTimeout: 30_000 });
  return {
    async call(c) {
      const url = new URL(`${base}/${encodeURIComponent(c.slug)}${c.path}`);
      for (const [k, v] of Object.entries(c.query)) url.searchParams.append(k, v);
      const headers: Record<string, string> = {
        authorization: `Bearer ${c.key}`,
        'idempotency-key': c.idempotencyKey,
      };
      if (c.maxPriceCents !== undefined) headers['x-svc-max-price-cents'] = String(c.maxPriceCents);
      let body: string | undefined;
      if (c.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(c.body);
      }
      // The URL parse stays: it normalizes the path (dot segments, escapes) exactly as before.
      const res = await pool.request({
        path: url.pathname + url.search,
        method: c.method as 'GET',
        headers,
        ...(body === undefined ? {} : { body }),
      });
      const raw = Buffer.from(await res.body.arrayBuffer());
      const h = (n: string): string | undefined => {
        const v = res.headers[n];
        return Array.isArray(v) ? v[0] : v;
      };
      const contentType = h('content-type') ?? '';
      const requestId = h('x-svc-request-id') ?? null;
      let problem: Record<string, unknown> | null = null;
      if (contentType.startsWith('application/problem+json')) {
        try {
          const p = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
          // Our refusals carry the call's own request id; an upstream's problem body does not.
          if (typeof p.code === 'string' && p.request_id === requestId) problem = p;
        } catch {
          /* an upstream's malformed body: relayed as is */
        }
      }
      const textual = contentType === '' || TEXTUAL.test(contentType);
      const kept = raw.subarray(0, BODY_CAP);
      const out: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const v = h(name);
        if (v !== undefined) out[name] = v;
      }
      for (const [name, v] of Object.entries(res.headers)) {
        if (name.startsWith('x-svc-') && v !== undefined) out[name] = Array.isArray(v) ? v.join(', ') : v;
      }
      return {
        status: res.statusCode,
        headers: out,
        problem,
        body: textual ? kept.toString('utf8') : kept.toString('base64'),
        body_encoding: textual ? 'utf8' : 'base64',
        body_truncated: raw.length > BODY_CAP,
        body_bytes: raw.length,
        request_id: requestId,
        price_cents: num(h('x-svc-price-cents')),
        charged_cents: num(h('x-svc-charged-cents')) ?? 0,
        balance_cents: num(h('x-svc-balance-cents')),
        idempotent_replay: h('x-svc-idempotent-replay') === 'true',
      };
    },
    close: () => pool.close(),
  };
}
