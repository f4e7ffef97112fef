/**
 * The upstream hop over the gateway's own keep-alive client (core/http1/): request headers cleaned (hop-by-hop,
 * the consumer's key, cookies and X-Svc-* never leave), the provider's secret injected, the answer handed to a sink
 * with pause/resume for backpressure, and failures classified 502 vs 504.
 */
import type { Readable } from 'node:stream';
import type { LookupFunction } from 'node:net';
import type { Listing } from '../cache/listing-cache.js';
import type { EgressPolicy } from '../../core/egress.js';
import type { Headers } from '../respond.js';
import { UpstreamPool } from '../../core/http1/pool.js';
import { CLIENT_OWNED_HEADERS, type UpstreamController } from '../../core/http1/call.js';

export interface UpstreamSink {
  /**
   * Headers arrived (lower-case names, repeats kept; `contentLength` null when chunked or read to close). The
   * controller may be paused until the sink is ready for the body.
   */
  start(status: number, headers: Headers, contentLength: number | null, controller: UpstreamController): void;
  data(chunk: Buffer, controller: UpstreamController): void;
  end(): void;
  /** Failure before or after start; `timeout` tells 504 from 502. */
  fail(kind: 'timeout' | 'error' | 'too_large', err: Error): void;
}
export interface ForwardRequest {
  method: string;
  /** Path after the slug, e.g. /users/7 */
  path: string;
  /** Raw query string without '?' ('' for none). */
  query: string;
  headers: [string, string][];
  /** A Buffer, or a stream (request-body.ts) that is marked taken once handed to the upstream client. */
  body: Buffer | (Readable & { taken: boolean }) | null;
  requestId: string;
}

/** What never reaches an upstream: the client's own headers, the consumer's credentials, and our Idempotency-Key. */
const DROP_REQUEST = new Set([
  ...CLIENT_OWNED_HEADERS,
  'proxy-authenticate',
  'authorization',
  'cookie',
  'idempotency-key',
]);

/** Upstream header lines and bytes accepted in an answer (502 past either): Node's own HTTP client limit. */
export const UPSTREAM_MAX_HEADER_BYTES = 16 * 1024;
export const UPSTREAM_MAX_HEADER_COUNT = 512;

/** The upstream pool; the egress rule (core/egress.ts) runs once per new connection, never per call. */
export function createUpstreamPool(opts: {
  connections: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  egress: EgressPolicy;
  /** Tests resolve names through their own resolver. */
  lookup?: LookupFunction;
}): UpstreamPool {
  return new UpstreamPool({
    ...opts,
    keepAliveMs: 30_000,
    maxHeaderBytes: UPSTREAM_MAX_HEADER_BYTES,
    maxHeaderCount: UPSTREAM_MAX_HEADER_COUNT,
  });
}

/** A query parameter's name as an upstream decodes it: `+` is a space, each `%XX` one byte (as latin1 text). */
function decodedName(pair: string): string {
  const eq = pair.indexOf('=');
  const name = (eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' ');
  if (!name.includes('%')) return name;
  return name.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** ASCII case folded: some upstream frameworks (ASP.NET) read query names case-insensitively. */
const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * The consumer's query with every parameter the provider's secret is injected as removed, whichever way its name is
 * spelled (`k`, `K`, `%6B`, `k` after a `;`, which some frameworks also split on), so the upstream never sees the
 * consumer's value beside (or instead of) the secret. Other parameters pass through byte for byte, in order.
 */
export function withoutParam(query: string, name: string): string {
  if (!query) return query;
  // Names are compared as the bytes an upstream decodes (UTF-8 read as latin1, like decodedName's %XX bytes).
  const want = fold(Buffer.from(name, 'utf8').toString('latin1'));
  if (!fold(query).includes(want) && !query.includes('%')) return query;
  const kept: string[] = [];
  for (const pair of query.split('&')) {
    if (!pair.includes(';')) {
      if (fold(decodedName(pair)) !== want) kept.push(pair);
      continue;
    }
    const parts = pair.split(';').filter((part) => fold(decodedName(part)) !== want);
    if (parts.length > 0) kept.push(parts.join(';'));
  }
  return kept.join('&');
}

/** Upstream path + query for a call, with query-parameter injection applied (the consumer's own copy removed). */
export function upstreamPath(listing: Listing, req: ForwardRequest): string {
  let q = req.query;
  if (listing.injection === 'query' && listing.injectionName && listing.secret !== null) {
    q = withoutParam(q, listing.injectionName);
    const kv = `${encodeURIComponent(listing.injectionName)}=${encodeURIComponent(listing.secret)}`;
    q = q ? `${q}&${kv}` : kv;
  }
  return listing.basePath + req.path + (q ? `?${q}` : '');
}

export function upstreamHeaders(listing: Listing, req: ForwardRequest): Record<string, string> {
  const out: Record<string, string> = {};
  // Headers named in `Connection` are hop-by-hop too (RFC 9110 §7.6.1).
  let named: Set<string> | undefined;
  for (const [k, v] of req.headers)
    if (k === 'connection')
      named = new Set(
        v
          .toLowerCase()
          .split(',')
          .map((t) => t.trim()),
      );
  for (const [k, v] of req.headers) {
    if (DROP_REQUEST.has(k) || k.startsWith('x-svc-') || named?.has(k)) continue;
    out[k] = out[k] === undefined ? v : `${out[k]}, ${v}`;
  }
  if (listing.secret !== null) {
    if (listing.injection === 'bearer') out['authorization'] = `Bearer ${listing.secret}`;
    else if (listing.injection === 'header' && listing.injectionName)
      out[listing.injectionName.toLowerCase()] = listing.secret;
  }
  // A streamed body keeps the client's declared length (the client checks it); otherwise it goes chunked.
  if (req.body !== null && !Buffer.isBuffer(req.body)) {
    for (const [k, v] of req.headers) if (k === 'content-length') out['content-length'] = v;
  }
  out['x-svc-request-id'] = req.requestId;
  return out;
}

/** Starts the upstream call; returns an abort function (client went away). */
export function forward(
  pool: UpstreamPool,
  listing: Listing,
  req: ForwardRequest,
  maxBytes: number,
  sink: UpstreamSink,
): (reason: Error) => void {
  let done = false;
  let bytes = 0;
  if (req.body !== null && !Buffer.isBuffer(req.body)) req.body.taken = true;
  const call = pool.request(
    listing.origin,
    { method: req.method, path: upstreamPath(listing, req), headers: upstreamHeaders(listing, req), body: req.body },
    {
      onHead(head, ctrl) {
        sink.start(head.status, head.headers, head.contentLength, ctrl);
      },
      onData(chunk, ctrl) {
        if (done) return;
        bytes += chunk.length;
        if (bytes > maxBytes) {
          done = true;
          ctrl.abort(new Error('upstream response too large'));
          sink.fail('too_large', new Error('upstream response exceeds SVC_GATEWAY_MAX_RESPONSE_BYTES'));
          return;
        }
        sink.data(chunk, ctrl);
      },
      onEnd() {
        if (done) return;
        done = true;
        sink.end();
      },
      onError(kind, err) {
        if (done) return;
        done = true;
        sink.fail(kind, err);
      },
    },
  );
  return (reason) => {
    if (done) return;
    done = true;
    call.abort(reason);
  };
}
