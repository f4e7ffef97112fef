/**
 * The upstream hop over one undici keep-alive Agent with `dispatch` (cheaper than `request`): request headers
 * cleaned (hop-by-hop, the consumer's key, cookies and X-Svc-* never leave), the provider's secret injected,
 * response streamed to a sink with pause/resume for backpressure, and failures classified 502 vs 504.
 */
import { Agent, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Listing } from '../cache/listing-cache.js';
import { egressConnector, type EgressPolicy } from '../../core/egress.js';
import type { LookupFunction } from 'node:net';

export interface UpstreamSink {
  /** Headers arrived. The controller may be paused until the sink is ready for the body. */
  start(status: number, headers: IncomingHttpHeaders, controller: Dispatcher.DispatchController): void;
  data(chunk: Buffer, controller: Dispatcher.DispatchController): void;
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
  /** A Buffer, or a stream (request-body.ts) that is marked taken once handed to undici. */
  body: Buffer | (Readable & { taken: boolean }) | null;
  requestId: string;
}

const DROP_REQUEST = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
  'cookie',
  'content-length',
  'expect',
  'idempotency-key',
]);

/** The upstream pool; the egress rule (core/egress.ts) runs once per new connection, never per call. */
export function createUpstreamAgent(opts: {
  connections: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  egress: EgressPolicy;
  /** Tests resolve names through their own resolver. */
  lookup?: LookupFunction;
}): Agent {
  return new Agent({
    connections: opts.connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: egressConnector({
      policy: opts.egress,
      timeout: opts.connectTimeoutMs,
      ...(opts.lookup ? { lookup: opts.lookup } : {}),
    }),
    headersTimeout: opts.headersTimeoutMs,
    bodyTimeout: opts.bodyTimeoutMs,
  });
}

/** Upstream path + query for a call, with query-parameter injection applied. */
export function upstreamPath(listing: Listing, req: ForwardRequest): string {
  let q = req.query;
  if (listing.injection === 'query' && listing.injectionName && listing.secret !== null) {
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
  // A streamed body keeps the client's declared length (undici checks it); otherwise undici frames it.
  if (req.body !== null && !Buffer.isBuffer(req.body)) {
    for (const [k, v] of req.headers) if (k === 'content-length') out['content-length'] = v;
  }
  out['x-svc-request-id'] = req.requestId;
  return out;
}

/** Starts the upstream call; returns an abort function (client went away). */
export function forward(
  agent: Agent,
  listing: Listing,
  req: ForwardRequest,
  maxBytes: number,
  sink: UpstreamSink,
): (reason: Error) => void {
  let ctrl: Dispatcher.DispatchController | undefined;
  let done = false;
  let bytes = 0;
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(controller) {
      ctrl = controller;
      if (done) controller.abort(new Error('aborted'));
    },
    onResponseStart(controller, statusCode, headers) {
      sink.start(statusCode, headers, controller);
    },
    onResponseData(controller, chunk) {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        done = true;
        controller.abort(new Error('upstream response too large'));
        sink.fail('too_large', new Error('upstream response exceeds SVC_GATEWAY_MAX_RESPONSE_BYTES'));
        return;
      }
      sink.data(chunk, controller);
    },
    onResponseEnd() {
      if (done) return;
      done = true;
      sink.end();
    },
    onResponseError(_controller, err) {
      if (done) return;
      done = true;
      const code = (err as { code?: string }).code ?? '';
      sink.fail(/TIMEOUT/.test(code) ? 'timeout' : 'error', err);
    },
  };
  if (req.body !== null && !Buffer.isBuffer(req.body)) req.body.taken = true;
  agent.dispatch(
    {
      origin: listing.origin,
      path: upstreamPath(listing, req),
      method: req.method as Dispatcher.HttpMethod,
      headers: upstreamHeaders(listing, req),
      body: req.body,
    },
    handler,
  );
  return (reason) => {
    if (done) return;
    done = true;
    ctrl?.abort(reason);
  };
}
