/** A background timer that never overlaps itself: a slow run makes later ticks skip, not stack. Returns a stopper. */
import type { Logger } from '../../core/log.js';
import { counter, gauge } from '../../core/metrics.js';

export function intervalJob(
  log: Logger,
  name: string,
  everyMs: number,
  run: () => Promise<unknown>,
  opts: { firstAfterMs?: number } = {},
): () => void {
  let running = false;
  const runs = counter('svc_job_runs_total', 'Background job runs by job and outcome', ['job', 'outcome']);
  const lastSuccess = gauge('svc_job_last_success_timestamp_seconds', 'When each background job last succeeded', [
    'job',
  ]);
  const tick = (): void => {
    if (running) return;
    running = true;
    run()
      .then(() => {
        runs.inc({ job: name, outcome: 'ok' });
        lastSuccess.set({ job: name }, Date.now() / 1000);
      })
      .catch((e: unknown) => {
        runs.inc({ job: name, outcome: 'failed' });
        log.error(`${name} failed`, { err: e instanceof Error ? e : String(e) });
      })
      .finally(() => {
        running = false;
      });
  };
  const first = opts.firstAfterMs === undefined ? undefined : setTimeout(tick, opts.firstAfterMs);
  const timer = setInterval(tick, everyMs);
  first?.unref();
  timer.unref();
  return () => {
    if (first) clearTimeout(first);
    clearInterval(timer);
  };
}
