/**
 * An open-loop load at a fixed rate: request i is due at start + i / rate, whether or not earlier ones were answered,
 * and its latency counts from when it was due (so a stall is not hidden by sending less: no coordinated omission).
 * autocannon's `overallRate` is not this: each connection sends back-to-back until its share of the second is used,
 * then waits for the next second, so every second starts with a closed-loop burst.
 */
import { Pool } from 'undici';
import { performance } from 'node:perf_hooks';

export interface PacedSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** The body of request i (unique JSON-RPC ids), if any. */
  body?: (i: number) => string;
  /** Headers of request i beyond `headers` (a unique Idempotency-Key), if any. */
  extraHeaders?: (i: number) => Record<string, string>;
  rate: number;
  seconds: number;
  connections: number;
}

export interface PacedResult {
  sent: number;
  answered: number;
  errors: number;
  non2xx: number;
  req_per_s: number;
  p50_ms: number;
  p99_ms: number;
}

const percentile = (sorted: Float64Array, q: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export async function pacedLoad(spec: PacedSpec): Promise<PacedResult> {
  const u = new URL(spec.url);
  const pool = new Pool(u.origin, { connections: spec.connections, pipelining: 1 });
  const path = u.pathname + u.search;
  const total = Math.round(spec.rate * spec.seconds);
  const latencies = new Float64Array(total);
  let answered = 0;
  let errors = 0;
  let non2xx = 0;
  let sent = 0;
  const start = performance.now();
  const interval = 1000 / spec.rate;
  const inFlight: Promise<void>[] = [];

  const fire = (i: number, due: number) =>
    pool
      .request({
        path,
        method: spec.method,
        headers: spec.extraHeaders ? { ...spec.headers, ...spec.extraHeaders(i) } : spec.headers,
        ...(spec.body ? { body: spec.body(i) } : {}),
      })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
        latencies[answered++] = performance.now() - due;
      })
      .catch(() => {
        errors++;
      });

  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * interval <= now) {
        inFlight.push(fire(sent, start + sent * interval));
        sent++;
      }
      if (sent < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  await Promise.all(inFlight);
  const elapsed = (performance.now() - start) / 1000;
  await pool.close();
  const sorted = latencies.subarray(0, answered).sort();
  return {
    sent,
    answered,
    errors,
    non2xx,
    req_per_s: Math.round(answered / elapsed),
    p50_ms: Math.round(percentile(sorted, 0.5) * 100) / 100,
    p99_ms: Math.round(percentile(sorted, 0.99) * 100) / 100,
  };
}
