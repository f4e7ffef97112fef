/**
 * A background timer that never overlaps itself: a slow run makes later ticks skip, not stack. Returns a stopper.
 * With `db`, a run is also single across nodes: on PostgreSQL (several control planes on one database) it takes
 * the job's advisory lock and a node that finds it held skips the tick (core/db/dialect.ts runAsSingleRunner).
 */
import type { Db } from '../../core/db/database.js';
import { runAsSingleRunner } from '../../core/db/dialect.js';
import type { Logger } from '../../core/log.js';
import { counter, gauge } from '../../core/metrics.js';

export function intervalJob(
  log: Logger,
  name: string,
  everyMs: number,
  run: () => Promise<unknown>,
  opts: { firstAfterMs?: number; db?: Db } = {},
): () => void {
  const once = opts.db
    ? (
        (db: Db) => () =>
          runAsSingleRunner(db, name, run)
      )(opts.db)
    : run;
  let running = false;
  const runs = counter('svc_job_runs_total', 'Background job runs by job and outcome', ['job', 'outcome']);
  const lastSuccess = gauge('svc_job_last_success_timestamp_seconds', 'When each background job last succeeded', [
    'job',
  ]);
  const tick = (): void => {
    if (running) return;
    running = true;
    once()
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
