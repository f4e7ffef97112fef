/**
 * Metering off (the benchmark's baseline): resolve the listing and forward, with the same relay as the metered
 * path (small answers in one write, larger ones streamed with backpressure); no auth, caps, ledger or usage.
 */
import { SvcError } from '../../core/errors.js';
import type { PipelineDeps, ProxyRequest } from '../pipeline.js';
import type { ClientSink, Headers } from '../respond.js';
import { resolveListing } from './checks.js';
import { forward } from './forward.js';
import { SMALL_BODY, responseHeaders } from './relay-util.js';

export function passThrough(d: PipelineDeps, p: ProxyRequest, slug: string, path: string, sink: ClientSink): void {
  const resolved = resolveListing(d.listings, slug, p.method, path);
  const ids: Headers = [['x-svc-request-id', p.requestId]];
  if (!resolved.ok) {
    sink.problem(new SvcError(resolved.code, resolved.detail), p.requestId, ids);
    return;
  }
  let started = false;
  let chunks: Buffer[] = [];
  let held = 0;
  let status = 0;
  let hdrs: Headers = [];
  // Bodies are held until they pass 64 KiB or end, so small answers (even chunked ones) go out in one write.
  const abort = forward(
    d.upstream,
    resolved.listing,
    { method: p.method, path, query: p.query, headers: p.headers, body: p.body, requestId: p.requestId },
    d.cfg.maxResponseBytes,
    {
      start: (st, headers) => {
        status = st;
        hdrs = [...responseHeaders(headers), ...ids];
      },
      data: (chunk, ctrl) => {
        if (!started) {
          chunks.push(chunk);
          held += chunk.length;
          if (held <= SMALL_BODY || sink.isHead) return;
          started = true;
          sink.begin(status, hdrs);
          const pending = chunks;
          chunks = [];
          for (const c of pending)
            if (!sink.write(c)) {
              ctrl.pause();
              sink.onWritable(() => ctrl.resume());
            }
          return;
        }
        if (!sink.write(chunk)) {
          ctrl.pause();
          sink.onWritable(() => ctrl.resume());
        }
      },
      end: () =>
        started ? sink.end() : sink.send(status, hdrs, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)),
      fail: (kind) =>
        started
          ? sink.close()
          : sink.problem(new SvcError(kind === 'timeout' ? 'upstream_timeout' : 'upstream_error'), p.requestId, ids),
    },
  );
  sink.onAbort(() => abort(new Error('client aborted')));
}
