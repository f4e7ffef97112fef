/**
 * The control side's hop to the gateway. MCP's `call_api` and `run_probe` and the web console (control/console/) go
 * through the gateway over HTTP with a key, so metering, caps, 402, 428, idempotency and refunds live in one place.
 * The answer is summarised: status, the headers that matter, the body as text (or base64) capped at BODY_CAP
 * bytes, price charged and balance left. `quote()` asks the gateway's free quote (`/_quote/...`) the same way.
 */
import { Pool, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { hash } from 'node:crypto';
import { isJsonObject } from './json-object.js';

export const BODY_CAP = 64 * 1024;
/**
 * How long the hop waits for the gateway's answer head, and between body chunks (undici's default is 300 s). Above
 * every wait the gateway itself bounds: its upstream headers timeout (SVC_GATEWAY_HEADERS_TIMEOUT_MS, 30 s by
 * default) and, for a retry, the first call's in flight (that timeout + 5 s), so the gateway's own 504
 * `upstream_timeout` or 409 `conflict` reaches the agent rather than a cut connection.
 */
export const GATEWAY_HOP_TIMEOUT_MS = 60_000;
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
  /** Extra request headers (the endpoint's declared header parameters); never the credential. */
  headers?: Record<string, string>;
  /** A body sent as is with its content type, instead of `body` as JSON (a form or text request body). */
  rawBody?: { contentType: string; text: string };
  /** Ask the free quote (`/_quote/<slug>/<path>`): nothing is called, reserved or charged. */
  quote?: boolean;
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
  const h = hash('sha256', JSON.stringify([scope, String(rpcId), tool, args]), 'base64url');
  return `mcp_${h.slice(0, 40)}`;
}

export interface Collected {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One request on the pool, its whole answer collected into a Buffer. A plain dispatch handler rather than
 * `pool.request()`, whose answer body is a Readable stream (its machinery was ~5 % of a call_api's CPU, profiled).
 */
export function collect(pool: Pool, opts: Dispatcher.DispatchOptions): Promise<Collected> {
  return new Promise((resolve, reject) => {
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    pool.dispatch(opts, {
      onRequestStart() {},
      // Called again after a 1xx: the last (final) answer's status and headers win.
      onResponseStart(_c, status, h) {
        statusCode = status;
        headers = h;
        chunks.length = 0;
      },
      onResponseData(_c, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        resolve({ statusCode, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
      },
      onResponseError(_c, err) {
        reject(err);
      },
    });
  });
}

const num = (v: string | undefined): number | null => (v === undefined || v === '' ? null : Number(v));
const TEXTUAL = /^(text\/|application\/(json|problem\+json|xml|javascript|x-www-form-urlencoded)|[^;]*\+(json|xml))/i;

/** Path characters a WHATWG URL parse keeps exactly as they are (no escape to add, no `%`, `\\`, `?` or `#`). */
const PLAIN_PATH = /^[A-Za-z0-9\-._~/]*$/;
/** A `.` or `..` segment, which the parse resolves. */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/** Characters application/x-www-form-urlencoded serialization (URLSearchParams) writes as they are. */
const PLAIN_QUERY_PART = /^[A-Za-z0-9*\-._]*$/;

/**
 * `new URLSearchParams(query).toString()`, written out when every name and value is plain (no escape to add):
 * the URLSearchParams object was ~1 % of a call_api's CPU (issue 28).
 */
function queryText(query: Record<string, string>): string {
  const names = Object.keys(query);
  let text = '';
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const value = query[name]!;
    if (!PLAIN_QUERY_PART.test(name) || !PLAIN_QUERY_PART.test(value)) return new URLSearchParams(query).toString();
    text += i === 0 ? `${name}=${value}` : `&${name}=${value}`;
  }
  return text;
}

/**
 * The request target (path and query) of a gateway call: what `new URL(base + /slug + path)` with each query
 * member appended to its searchParams gives as `pathname + search`. The parse normalizes the path (dot segments,
 * escapes); a path with nothing to normalize skips it (it was ~2 % of a call_api's CPU), and the query is the same
 * application/x-www-form-urlencoded text either way. `basePath` is `base`'s own path, as the parse writes it.
 */
export function requestTarget(
  base: string,
  basePath: string,
  c: Pick<GatewayCall, 'quote' | 'slug' | 'path' | 'query'>,
): string {
  const path = `${c.quote ? '/_quote' : ''}/${encodeURIComponent(c.slug)}${c.path}`;
  const query = queryText(c.query);
  if (PLAIN_PATH.test(path) && PLAIN_PATH.test(basePath) && !DOT_SEGMENT.test(path)) {
    return `${basePath}${path}${query === '' ? '' : `?${query}`}`;
  }
  const url = new URL(`${base}${path}`);
  for (const [k, v] of Object.entries(c.query)) url.searchParams.append(k, v);
  return url.pathname + url.search;
}

export function createGatewayCalls(gatewayUrl: string): GatewayCalls {
  const base = gatewayUrl.replace(/\/+$/, '');
  // One keep-alive pool to the one gateway origin: no per-call origin lookup or URL re-parse in undici.
  // The base URL's own path ('' for an origin), as the WHATWG parse below writes it.
  const basePath = new URL(`${base}/`).pathname.slice(0, -1);
  const pool = new Pool(new URL(base).origin, {
    connections: 128,
    keepAliveTimeout: 30_000,
    headersTimeout: GATEWAY_HOP_TIMEOUT_MS,
    bodyTimeout: GATEWAY_HOP_TIMEOUT_MS,
  });
  return {
    async call(c) {
      const target = requestTarget(base, basePath, c);
      const headers: Record<string, string> = {
        ...c.headers,
        authorization: `Bearer ${c.key}`,
        'idempotency-key': c.idempotencyKey,
      };
      if (c.maxPriceCents !== undefined) headers['x-svc-max-price-cents'] = String(c.maxPriceCents);
      let body: string | undefined;
      if (c.rawBody !== undefined) {
        headers['content-type'] = c.rawBody.contentType;
        body = c.rawBody.text;
      } else if (c.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(c.body);
      }
      const res = await collect(pool, {
        path: target,
        method: c.method as Dispatcher.HttpMethod,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      const raw = res.body;
      const h = (n: string): string | undefined => {
        const v = res.headers[n];
        return Array.isArray(v) ? v[0] : v;
      };
      const contentType = h('content-type') ?? '';
      const requestId = h('x-svc-request-id') ?? null;
      let problem: Record<string, unknown> | null = null;
      if (contentType.startsWith('application/problem+json')) {
        try {
          const p: unknown = JSON.parse(raw.toString('utf8'));
          // Our refusals carry the call's own request id; an upstream's problem body does not.
          if (isJsonObject(p) && typeof p.code === 'string' && p.request_id === requestId) problem = p;
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
