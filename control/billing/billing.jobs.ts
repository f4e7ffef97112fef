/**
 * Background timers of billing: the auto-reload sweep (every SVC_AUTO_RELOAD_INTERVAL_MS) and, when
 * SVC_PAYOUTS_AUTO is on, an hourly payout run for the previous month (a no-op once that period is done).
 */
import type { AppContext } from '../context.js';
import { runAutoReload } from './auto-reload.service.js';
import { runPayouts } from './payouts.service.js';

function every(ctx: AppContext, name: string, ms: number, fn: () => Promise<unknown>): () => void {
  let running = false;
  const timer = setInterval(() => {
    // A slow processor call must not stack sweeps on top of each other.
    if (running) return;
    running = true;
    fn()
      .catch((e: unknown) => ctx.log.error(`${name} failed`, { err: e instanceof Error ? e : String(e) }))
      .finally(() => {
        running = false;
      });
  }, ms);
  timer.unref();
  return () => clearInterval(timer);
}

export function autoReloadJob(ctx: AppContext): () => void {
  return every(ctx, 'auto-reload', ctx.config.billing.autoReloadIntervalMs, async () => {
    const results = await runAutoReload(ctx);
    for (const r of results) ctx.log.info('auto-reload', { ...r });
  });
}

export function payoutsJob(ctx: AppContext): () => void {
  if (!ctx.config.billing.payoutsAuto) return () => {};
  return every(ctx, 'payouts', 3_600_000, async () => {
    const results = await runPayouts(ctx);
    for (const r of results) if (r.outcome === 'paid' || r.outcome === 'failed') ctx.log.info('payout', { ...r });
  });
}
