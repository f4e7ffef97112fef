/**
 * Delivering webhook events (docs/webhooks.md): POST `{id, type, created, data}` signed as Stripe signs
 * (`Svc-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`), at least once: a delivery is claimed by moving its
 * `next_attempt_at` past the claim window, so two control-plane replicas never send the same attempt at once, and
 * a replica that dies mid-send leaves it to be sent again after the window. Failed attempts back off exponentially
 * for 3 days; an endpoint that fails for 3 days is disabled and its org mailed.
 */
import { createHmac } from 'node:crypto';
import { decryptSecret } from '../../core/crypto.js';
import { SvcError } from '../../core/errors.js';
import { counter, gauge, histogram, REMOTE_BUCKETS } from '../../core/metrics.js';
import type { AppContext } from '../context.js';
import { safeFetch } from '../catalog/safe-fetch.js';

const DAY_MS = 86_400_000;
/** How long a claimed attempt is ours before another replica may take it (> the send timeout). */
const CLAIM_MS = 60_000;
const SEND_TIMEOUT_MS = 10_000;
/** Deliveries sent per round; the round repeats every poll while any are due. */
const ROUND = 50;

export interface DeliveryTiming {
  /** First retry delay; each failed attempt doubles it up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Retries stop, and a failing endpoint is disabled, after this long. */
  giveUpMs: number;
}
export const DEFAULT_TIMING: DeliveryTiming = { baseDelayMs: 30_000, maxDelayMs: 6 * 3_600_000, giveUpMs: 3 * DAY_MS };

export function signature(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** Delay before attempt `attempts + 1`, with ±10 % jitter so a recovering receiver is not hit all at once. */
export function retryDelayMs(attempts: number, t: DeliveryTiming, rand: () => number = Math.random): number {
  const d = Math.min(t.maxDelayMs, t.baseDelayMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(d * (0.9 + 0.2 * rand()));
}

const deliveries = counter('svc_webhook_deliveries_total', 'Webhook delivery attempts by outcome', ['outcome']);
const deliveryDuration = histogram('svc_webhook_delivery_duration_seconds', 'Webhook POST latency', [
  ...REMOTE_BUCKETS,
]);
for (const outcome of ['delivered', 'retry', 'failed']) deliveries.inc({ outcome }, 0);

/** Registers the pending-deliveries gauge (read at scrape time). */
export function registerDeliveryGauge(ctx: AppContext): void {
  let last = 0;
  gauge('svc_webhook_pending', 'Webhook deliveries waiting to be sent or retried', [], function () {
    this.set(last);
  });
  const refresh = () =>
    ctx.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .executeTakeFirst()
      .then((r) => {
        last = Number(r?.n ?? 0);
      });
  const t = setInterval(() => void refresh().catch(() => {}), 10_000);
  t.unref();
  void refresh().catch(() => {});
}

interface Due {
  id: string;
  event_id: string;
  endpoint_id: string;
  org_id: string;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
}

/** Sends every due delivery (up to ROUND); returns how many attempts were made. */
export async function deliverDue(ctx: AppContext, timing: DeliveryTiming = DEFAULT_TIMING): Promise<number> {
  const now = ctx.clock.now();
  const due = await ctx.db
    .selectFrom('webhook_deliveries')
    .select(['id', 'event_id', 'endpoint_id', 'org_id', 'attempts', 'next_attempt_at', 'created_at'])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(ROUND)
    .execute();
  let sent = 0;
  await Promise.all(
    due.map(async (d) => {
      if (await claim(ctx, d, now)) {
        sent++;
        await attempt(ctx, d, timing);
      }
    }),
  );
  return sent;
}

async function claim(ctx: AppContext, d: Due, now: number): Promise<boolean> {
  const r = await ctx.db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: now + CLAIM_MS })
    .where('id', '=', d.id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '=', d.next_attempt_at)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

async function attempt(ctx: AppContext, d: Due, timing: DeliveryTiming): Promise<void> {
  const row = await ctx.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
    .select(['e.type', 'e.data_json', 'e.created_at as event_at', 'w.url', 'w.secret_enc', 'w.status', 'w.deleted_at'])
    .where('d.id', '=', d.id)
    .executeTakeFirstOrThrow();
  if (row.status !== 'enabled' || row.deleted_at !== null) {
    await finish(ctx, d, { status: 'failed', error: 'endpoint disabled or deleted' });
    return;
  }
  // The body is built once per attempt from stored fields, so every attempt carries the same event.
  const body = `{"id":${JSON.stringify(d.event_id)},"type":${JSON.stringify(row.type)},"created":${Math.floor(
    row.event_at / 1000,
  )},"data":${row.data_json}}`;
  const t = Math.floor(ctx.clock.now() / 1000);
  const started = performance.now();
  let status: number | null = null;
  let error: string | null = null;
  try {
    const res = await safeFetch(row.url, {
      production: ctx.config.isProduction,
      egressAllow: ctx.config.egressAllow,
      method: 'POST',
      maxRedirects: 0,
      timeoutMs: SEND_TIMEOUT_MS,
      maxBytes: 64 * 1024,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'svc-webhooks/1',
        'svc-signature': signature(decryptSecret(ctx.secretKey, row.secret_enc), t, body),
        'svc-event-id': d.event_id,
        'svc-delivery-attempt': String(d.attempts + 1),
      },
      body,
    });
    status = res.status;
    if (res.status < 200 || res.status > 299) error = `HTTP ${res.status}`;
  } catch (e) {
    error = e instanceof SvcError ? e.detail : (e as Error).message;
  }
  deliveryDuration.observe((performance.now() - started) / 1000);
  const now = ctx.clock.now();
  if (error === null) {
    deliveries.inc({ outcome: 'delivered' });
    await finish(ctx, d, { status: 'delivered', code: status });
    await ctx.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: null })
      .where('id', '=', d.endpoint_id)
      .execute();
    return;
  }
  const attempts = d.attempts + 1;
  const giveUp = now - d.created_at >= timing.giveUpMs;
  deliveries.inc({ outcome: giveUp ? 'failed' : 'retry' });
  await ctx.db
    .updateTable('webhook_deliveries')
    .set({
      status: giveUp ? 'failed' : 'pending',
      attempts,
      last_attempt_at: now,
      last_status_code: status,
      last_error: error.slice(0, 500),
      next_attempt_at: giveUp ? now : now + retryDelayMs(attempts, timing),
    })
    .where('id', '=', d.id)
    .execute();
  await noteEndpointFailure(ctx, d.endpoint_id, d.org_id, now, timing);
}

async function finish(
  ctx: AppContext,
  d: Due,
  r: { status: 'delivered' | 'failed'; code?: number | null; error?: string },
): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db
    .updateTable('webhook_deliveries')
    .set({
      status: r.status,
      attempts: d.attempts + (r.status === 'delivered' ? 1 : 0),
      last_attempt_at: now,
      last_status_code: r.code ?? null,
      last_error: r.error ?? null,
      delivered_at: r.status === 'delivered' ? now : null,
      next_attempt_at: now,
    })
    .where('id', '=', d.id)
    .execute();
}

/** Starts (or continues) the endpoint's failing run; 3 days of it disable the endpoint and mail the org once. */
async function noteEndpointFailure(
  ctx: AppContext,
  endpointId: string,
  orgId: string,
  now: number,
  timing: DeliveryTiming,
): Promise<void> {
  await ctx.db
    .updateTable('webhook_endpoints')
    .set({ failing_since: now })
    .where('id', '=', endpointId)
    .where('failing_since', 'is', null)
    .execute();
  const disabled = await ctx.db
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: 'failed for 3 days', updated_at: now })
    .where('id', '=', endpointId)
    .where('status', '=', 'enabled')
    .where('failing_since', '<=', now - timing.giveUpMs)
    .returning(['url'])
    .executeTakeFirst();
  if (!disabled) return;
  await ctx.db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', last_error: 'endpoint disabled after 3 days of failures' })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
  ctx.log.warn('webhook endpoint disabled', { endpoint_id: endpointId, org_id: orgId });
  const org = await ctx.db.selectFrom('orgs').select('email').where('id', '=', orgId).executeTakeFirst();
  if (org?.email)
    await ctx.mailer.send({
      to: org.email,
      subject: 'svc: a webhook endpoint was disabled',
      text: [
        `Deliveries to ${disabled.url} have failed for 3 days, so svc stopped sending to it.`,
        'Fix the receiver, then enable it again from the dashboard (Webhooks) or with:',
        `  svc webhooks enable ${endpointId}`,
        'Failed deliveries can be replayed from the delivery log.',
      ].join('\n'),
    });
}
