/**
 * Preloaded into the gateway (NODE_OPTIONS=--import) to measure its event-loop delay under load without
 * the gateway's cooperation: on SIGUSR2 it writes the histogram since the last signal to
 * $BENCH_ELD_DIR/eld-<pid>.json (milliseconds, with a sequence number) and resets it.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';

export interface EldSnapshot {
  seq: number;
  count: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

const dir = process.env.BENCH_ELD_DIR;
if (dir) {
  // 1 ms is the finest sampling interval monitorEventLoopDelay allows; stalls show as delay beyond it.
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let seq = 0;
  process.on('SIGUSR2', () => {
    seq++;
    const snap: EldSnapshot = {
      seq,
      count: h.count,
      p50Ms: h.percentile(50) / 1e6,
      p99Ms: h.percentile(99) / 1e6,
      p999Ms: h.percentile(99.9) / 1e6,
      maxMs: h.max / 1e6,
    };
    const file = join(dir, `eld-${process.pid}.json`);
    writeFileSync(file + '.tmp', JSON.stringify(snap));
    renameSync(file + '.tmp', file);
    h.reset();
  });
}
