/** The webhook sender (every SVC_WEBHOOK_POLL_MS) and the alert detector (every SVC_ALERTS_INTERVAL_MS). */
import type { AppContext } from '../context.js';
import { intervalJob } from '../lib/interval-job.js';
import { detectAlerts } from './alerts.js';
import { DEFAULT_TIMING, deliverDue, registerDeliveryGauge } from './delivery.js';

export function webhookDeliveryJob(ctx: AppContext): () => void {
  registerDeliveryGauge(ctx);
  const timing = { ...DEFAULT_TIMING, baseDelayMs: ctx.config.webhooks.retryBaseMs };
  return intervalJob(ctx.log, 'webhook delivery', ctx.config.webhooks.pollMs, async () => {
    // Keep sending while full rounds come back (a backlog after an outage drains at once, not 50 per poll).
    while ((await deliverDue(ctx, timing)) >= 50);
  });
}

export function alertsJob(ctx: AppContext): () => void {
  return intervalJob(ctx.log, 'alerts', ctx.config.webhooks.alertsIntervalMs, async () => {
    const r = await detectAlerts(ctx);
    if (r.balance_low + r.cap_reached > 0) ctx.log.info('alerts emitted', r);
  });
}
