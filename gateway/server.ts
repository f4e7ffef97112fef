/**
 * The gateway's HTTP routes over the uWS API subset in http-api.ts (a native uWS build or the JavaScript fallback,
 * picked by server-choice.ts): health routes, header-size guard, request body intake with a size cap, then hands a
 * typed ProxyRequest to the pipeline.
 */
import type { HttpApp, HttpServerModule } from './http-api.js';
import { SvcError } from '../core/errors.js';
import { fastId } from './fast-id.js';
import { FRAMING_ANSWER_PAD, checkFraming } from './framing.js';
import type { Pipeline, ProxyRequest } from './pipeline.js';
import { UwsSink, type Headers } from './respond.js';
import { BodyDrain, DRAIN_BYTES, RequestBody } from './request-body.js';
import { SMALL_BODY } from './steps/relay-util.js';
import type { GatewayMetrics } from './metrics.js';

/** The listing slug of a proxied path (`/_quote/<slug>/…` for quotes). */
function slugOf(url: string): string {
  const path = url.startsWith('/_quote/') ? url.slice(7) : url;
  const end = path.indexOf('/', 1);
  return end < 0 ? path.slice(1) : path.slice(1, end);
}

export interface ServerState {
  closing: boolean;
  active: number;
  /** Which HTTP server runs: a native uWS build or the JavaScript fallback (server-choice.ts). */
  server: 'native' | 'fallback';
  workerIndex: number;
  /** Last change-feed seq applied by this worker. */
  feedSeq: () => number;
  /** Per-call metrics (gateway/metrics.ts); absent in tests that build a server without them. */
  metrics?: GatewayMetrics;
  /** The optional, sampled per-call access log (SVC_GATEWAY_ACCESS_LOG_SAMPLE of the calls; off at 0). */
  accessLog?: { sample: number; write(fields: Record<string, unknown>): void };
}

// Long: the uWS server and its routes are one closure over the pipeline, the metrics and the drain state.
export function createServer(
  uws: HttpServerModule,
  pipeline: Pipeline,
  state: ServerState,
  opts: { maxRequestBytes: number; maxHeaderBytes: number },
): HttpApp {
  // No `uWebSockets: 20` header on answers (it names the server and its version): uWS's `_cfg('silent')`.
  const cfg: unknown = Reflect.get(uws, '_cfg');
  if (typeof cfg === 'function') cfg.call(uws, 'silent');
  const app = uws.App();
  app.get('/healthz', (res) => {
    res.cork(() => {
      res.writeHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          ok: true,
          native: state.server === 'native',
          server: state.server,
          pid: process.pid,
          worker: state.workerIndex,
          changes_seq: state.feedSeq(),
        }),
      );
    });
  });
  app.get('/readyz', (res) => {
    res.cork(() => {
      res.writeStatus(state.closing ? '503 Service Unavailable' : '200 OK');
      res.writeHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ready: !state.closing }));
    });
  });
  // Long: the uWS request contract: everything read from `req` is copied synchronously and onAborted set before any
  // await, so it stays one callback.
  app.any('/*', (res, req) => {
    const method = req.getMethod().toUpperCase();
    const url = req.getUrl();
    const query = req.getQuery() ?? '';
    const headers: Headers = [];
    let headerBytes = url.length + query.length;
    req.forEach((k, v) => {
      headers.push([k, v]);
      headerBytes += k.length + v.length + 4;
    });
    state.active++;
    const started = performance.now();
    const sink: UwsSink = new UwsSink(res, method === 'HEAD', () => {
      state.active--;
      // A 404 from svc itself names no listing that exists: it is not labelled (bounded cardinality).
      const slug = sink.own && sink.status === 404 ? null : slugOf(url);
      const seconds = (performance.now() - started) / 1000;
      state.metrics?.answered(sink.own ? 'gateway' : 'upstream', sink.status || 499, slug, seconds);
      const log = state.accessLog;
      // The path without its query (it may carry an upstream's own credentials); the request id the client got.
      if (log && log.sample > 0 && Math.random() < log.sample)
        log.write({
          request_id: requestId,
          method,
          listing: slug,
          status: sink.status || 499,
          source: sink.own ? 'gateway' : 'upstream',
          ms: Math.round(seconds * 10_000) / 10,
        });
    });
    const requestId = fastId('req');
    // Method, header count, Transfer-Encoding and Content-Length (framing.ts); a refusal closes the connection.
    const framing = checkFraming(method, headers);
    if (!framing.ok)
      return sink.problem(
        framing.error,
        requestId,
        [...framing.headers, ['x-svc-request-id', requestId], ['connection', 'close']],
        FRAMING_ANSWER_PAD,
      );
    const { contentLength, chunked } = framing;
    if (headerBytes > opts.maxHeaderBytes) {
      return sink.problem(
        new SvcError('headers_too_large', `Request headers exceed ${opts.maxHeaderBytes} bytes.`),
        requestId,
        [
          ['x-svc-request-id', requestId],
          ['connection', 'close'],
        ],
      );
    }
    const run = (body: Buffer | RequestBody | null) => {
      const p: ProxyRequest = { method, url, query, headers, body, requestId };
      pipeline.handle(p, sink).then(
        () => {
          if (body instanceof RequestBody && !body.taken) body.discard();
        },
        (e: unknown) => {
          if (body instanceof RequestBody) body.discard();
          sink.problem(
            new SvcError('internal', 'Internal gateway error; the call was not charged.', { cause: e }),
            requestId,
            [['x-svc-request-id', requestId]],
          );
          process.stderr.write(
            JSON.stringify({
              lvl: 'error',
              proc: 'gateway',
              msg: 'pipeline failed',
              err: String((e as Error)?.stack ?? e),
            }) + '\n',
          );
        },
      );
    };
    if (contentLength <= 0 && !chunked) return run(null);
    const tooLarge = (complete: boolean) =>
      sink.problem(
        new SvcError('payload_too_large', `Request body exceeds ${opts.maxRequestBytes} bytes.`),
        requestId,
        [['x-svc-request-id', requestId], ...(complete ? [] : ([['connection', 'close']] as Headers))],
      );
    if (contentLength > opts.maxRequestBytes) {
      // Read and drop a modest excess so the client sees the 413 rather than a reset; answer a huge one at once.
      if (contentLength - opts.maxRequestBytes > DRAIN_BYTES) return tooLarge(false);
      const drain = new BodyDrain();
      drain.done.then(tooLarge);
      res.onData((ab, isLast) => drain.feed(ab.byteLength, isLast));
      return;
    }
    if (chunked || contentLength > SMALL_BODY) {
      // Large or chunked bodies stream to the upstream with backpressure instead of being buffered.
      const stream = new RequestBody(res, opts.maxRequestBytes, () => !sink.aborted);
      sink.beforeEnd(() => stream.release());
      res.onData((ab, isLast) => stream.feed(ab, isLast));
      return run(stream);
    }
    const parts: Buffer[] = [];
    let size = 0;
    let drain: BodyDrain | null = null;
    res.onData((ab, isLast) => {
      if (drain) return drain.feed(ab.byteLength, isLast);
      size += ab.byteLength;
      if (size > opts.maxRequestBytes) {
        drain = new BodyDrain();
        drain.done.then(tooLarge);
        return drain.feed(0, isLast);
      }
      // The ArrayBuffer is only valid during this callback: copy it.
      parts.push(Buffer.from(ab.slice(0)));
      if (isLast) run(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    });
  });
  return app;
}
