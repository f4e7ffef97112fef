/**
 * The control side's hop to the gateway. MCP's `call_api` and `run_probe` and the web console (control/console/) go
 * through the gateway over HTTP with a key, so metering, caps, 402, 428, idempotency and refunds live in one place.
 * The answer is summarised: status, the headers that matter, the body as text (or base64) capped at BODY_CAP
 * bytes, price charged and balance left. `quote()` asks the gateway's free quote (`/_quote/...`) the same way.
 */
import { hash } from 'node:crypto';
import { isJsonObject } from './json-object.js';
import { SvcError } from './errors.js';
import { UpstreamPool, collect, type Collected } from './http1/pool.js';
import { CLIENT_OWNED_HEADERS } from './http1/call.js';
import { fieldValue } from './http1/response-parser.js';

export const BODY_CAP = 64 * 1024;
/**
 * How long the hop waits for the gateway's answer head, and between body chunks. Above
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

/** The agent's view of the gateway's answer: our problem told from an upstream's, the body capped, the charge. */
function summarise(res: Collected): GatewayAnswer {
  const raw = res.body;
  const h = (n: string) => fieldValue(res.headers, n);
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
  // Every X-Svc-* header, repeats joined as one field value.
  for (const [name, v] of res.headers)
    if (name.startsWith('x-svc-')) out[name] = out[name] === undefined ? v : `${out[name]}, ${v}`;
  return {
    status: res.status,
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
}

/**
 * Names the hop (or the HTTP client) owns, never taken from a caller: framing, connection management and the
 * credential. Callers filter their own first (control/console/console-form.ts); this is the client's last word.
 */
const HOP_OWNED = new Set([...CLIENT_OWNED_HEADERS, 'authorization', 'idempotency-key', 'x-svc-max-price-cents']);
/** A field value may hold visible characters, SP and HTAB; no other control character. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\uffff]*$/;

/** A call's extra headers, names lower-cased, the hop's own left out; a value with a control character is refused. */
function extraHeaders(given: Record<string, string> | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (given === undefined) return headers;
  for (const name in given) {
    const lower = name.toLowerCase();
    if (HOP_OWNED.has(lower)) continue;
    const value = given[name]!;
    if (!FIELD_VALUE.test(value))
      throw new SvcError('validation_failed', `header ${name} holds a control character`, {
        errors: [{ path: `headers.${name}`, message: 'a control character (such as CR or LF) cannot be sent' }],
      });
    headers[lower] = value;
  }
  return headers;
}

/**
 * A failed hop in the agent's words: the client names its failures as an upstream's ("upstream headers timeout"),
 * but here the gateway is the party that failed. The errno or the client's code stays on the error as `code`.
 */
function hopFailure(origin: string, e: unknown): Error {
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as NodeJS.ErrnoException).code;
  const what =
    code === 'EUPSTREAM_HEADERS_TIMEOUT'
      ? `did not answer within ${GATEWAY_HOP_TIMEOUT_MS / 1000} s`
      : code === 'EUPSTREAM_BODY_TIMEOUT'
        ? `stopped sending its answer for ${GATEWAY_HOP_TIMEOUT_MS / 1000} s`
        : code === 'EUPSTREAM_CONNECT_TIMEOUT'
          ? `could not be connected to within ${HOP_CONNECT_TIMEOUT_MS / 1000} s`
          : `failed: ${err.message}`;
  const out: Error & { code?: string } = new Error(`the gateway at ${origin} ${what}`, { cause: err });
  if (code !== undefined) out.code = code;
  return out;
}

/** How long an idle hop socket is kept: under the gateway's 10 s idle close (uWS), so a call never meets a socket
 * the gateway is closing. */
const HOP_KEEP_ALIVE_MS = 5_000;
const HOP_CONNECT_TIMEOUT_MS = 10_000;
/** Header lines and bytes accepted in the gateway's answer: the gateway's own bounds on an upstream's, plus its own. */
const HOP_MAX_HEADER_BYTES = 32 * 1024;
const HOP_MAX_HEADER_COUNT = 600;

/**
 * The hop's pool: svc's own HTTP/1.1 client (core/http1/, the gateway's upstream client), 128 keep-alive sockets to
 * the one gateway origin. It costs a call ~30-75 µs of CPU less than undici did (bench/RESULTS.md, issue 28). The hop
 * goes where the operator pointed it, so no egress rule applies (the gateway applies that rule to upstreams).
 */
export function createHopPool(): UpstreamPool {
  return new UpstreamPool({
    connections: 128,
    connectTimeoutMs: HOP_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: GATEWAY_HOP_TIMEOUT_MS,
    bodyTimeoutMs: GATEWAY_HOP_TIMEOUT_MS,
    keepAliveMs: HOP_KEEP_ALIVE_MS,
    maxHeaderBytes: HOP_MAX_HEADER_BYTES,
    maxHeaderCount: HOP_MAX_HEADER_COUNT,
    egress: { guard: false, allow: new Set() },
  });
}

export function createGatewayCalls(gatewayUrl: string): GatewayCalls {
  const base = gatewayUrl.replace(/\/+$/, '');
  // The base URL's own path ('' for an origin), as the WHATWG parse below writes it.
  const basePath = new URL(`${base}/`).pathname.slice(0, -1);
  const origin = new URL(base).origin;
  const pool = createHopPool();
  return {
    async call(c) {
      const headers = extraHeaders(c.headers);
      headers.authorization = `Bearer ${c.key}`;
      headers['idempotency-key'] = c.idempotencyKey;
      if (c.maxPriceCents !== undefined) headers['x-svc-max-price-cents'] = String(c.maxPriceCents);
      let body: Buffer | null = null;
      if (c.rawBody !== undefined) {
        headers['content-type'] = c.rawBody.contentType;
        body = Buffer.from(c.rawBody.text, 'utf8');
      } else if (c.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = Buffer.from(JSON.stringify(c.body), 'utf8');
      }
      let res: Collected;
      try {
        res = await collect(pool, origin, { method: c.method, path: requestTarget(base, basePath, c), headers, body });
      } catch (e) {
        throw hopFailure(origin, e);
      }
      return summarise(res);
    },
    close: async () => pool.close(),
  };
}
