/**
 * Micro-benchmark of what gateway metrics add to one paid call (gateway/metrics.ts, as server.ts and worker.ts
 * call it): the two clock reads of the answer's timing, `answered` (class counter, duration histogram, listing
 * label), and the settle's priced/charged counters, upstream histogram and the batch's commit time. The same loop
 * without the metric calls is the baseline, measured in the same process. Target: <= 2 µs of CPU per call
 * (issue "Operations"). Prints one JSON line.
 */
import { GatewayMetrics } from '../../gateway/metrics.js';

export interface MetricsCostResult {
  /** CPU µs per call with metrics. */
  onUs: number;
  /** CPU µs per call of the same loop without them. */
  offUs: number;
  /** on - off: what metrics add to a call. */
  addedUs: number;
  calls: number;
}

function cpuUsPerCall(calls: number, fn: (i: number) => void): number {
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) fn(i);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / calls;
}

function main(): void {
  const calls = Number(process.argv[2] ?? 2_000_000);
  const m = new GatewayMetrics();
  const slugs = Array.from({ length: 20 }, (_, i) => `api-${i}`);
  let sink = 0;
  const off = (i: number) => {
    sink += i & 1;
  };
  const on = (i: number) => {
    const started = performance.now();
    sink += i & 1;
    m.answered('upstream', 200, slugs[i % 20]!, (performance.now() - started) / 1000);
    m.priced.inc();
    m.charged.inc([], 3);
    m.upstreamDuration.observe(0.0012);
    if ((i & 63) === 0) m.settleCommit.observe(0.0004); // one commit per batch of about 64 settles
  };
  // Warm both paths up before measuring.
  cpuUsPerCall(200_000, off);
  cpuUsPerCall(200_000, on);
  const offUs = cpuUsPerCall(calls, off);
  const onUs = cpuUsPerCall(calls, on);
  const r: MetricsCostResult = {
    onUs: Math.round(onUs * 1000) / 1000,
    offUs: Math.round(offUs * 1000) / 1000,
    addedUs: Math.round((onUs - offUs) * 1000) / 1000,
    calls,
  };
  if (sink < 0) process.stderr.write('unreachable\n');
  process.stdout.write(`${JSON.stringify(r)}\n`);
}

main();
