/**
 * Background timers of billing: the auto-reload sweep (every SVC_AUTO_RELOAD_INTERVAL_MS) and, when
 * SVC_PAYOUTS_AUTO is on, an hourly payout run for the previous month (a no-op once that period is done).
 */
import type { AppContext } from '../context.js';
import { runAutoReload } from './auto-reload.service.js';
import { runPayouts } from './payouts.service.js';
import { intervalJob } from '../lib/interval-job.js';

export function autoReloadJob(ctx: AppContext): () => void {
  return intervalJob(
    ctx.log,
    'auto-reload',
    ctx.config.billing.autoReloadIntervalMs,
    async () => {
      const results = await runAutoReload(ctx);
      for (const r of results) ctx.log.info('auto-reload', { ...r });
    },
    { db: ctx.db },
  );
}

export function payoutsJob(ctx: AppContext): () => void {
  if (!ctx.config.billing.payoutsAuto) return () => {};
  return intervalJob(
    ctx.log,
    'payouts',
    3_600_000,
    async () => {
      const results = await runPayouts(ctx);
      for (const r of results) if (r.outcome === 'paid' || r.outcome === 'failed') ctx.log.info('payout', { ...r });
    },
    { db: ctx.db },
  );
}
