/**
 * Webhook endpoints and alert settings of an org (docs/webhooks.md). Every operation takes the caller's principal
 * and needs `billing:write` (sessions hold every scope): the events carry money (balances, payments, payouts).
 */
import { encryptSecret } from '../../core/crypto.js';
import type { Db } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';
import { newId, randomString } from '../../core/ids.js';
import type {
  AlertSettings,
  CreatedWebhook,
  CreateWebhookInput,
  PatchAlertSettings,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEventType,
} from '../../core/schemas/webhooks.schemas.js';
import { WEBHOOK_EVENT_TYPES } from '../../core/schemas/webhooks.schemas.js';
import { assertScope, type Principal } from '../auth/principal.js';
import { assertFetchableUrl } from '../catalog/safe-fetch.js';
import type { AppContext } from '../context.js';
import { iso } from '../providers/apis.serialize.js';
import { emitEvent } from './events.js';
import { balanceLowThreshold } from './alerts.js';

/** Endpoints one org may register (Stripe allows 16 per account). */
export const MAX_ENDPOINTS = 16;

type EndpointRow = {
  id: string;
  url: string;
  description: string | null;
  events: string;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  failing_since: number | null;
  created_at: number;
};

const ENDPOINT_COLUMNS = [
  'id',
  'url',
  'description',
  'events',
  'status',
  'disabled_reason',
  'failing_since',
  'created_at',
] as const;

function toEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    id: r.id,
    object: 'webhook_endpoint',
    url: r.url,
    description: r.description,
    events: r.events
      .split(' ')
      .filter((e): e is (typeof WEBHOOK_EVENT_TYPES)[number] => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(e)),
    status: r.status,
    disabled_reason: r.disabled_reason,
    failing_since: iso(r.failing_since),
    created_at: iso(r.created_at),
  };
}

/** The URL rule: http(s) with no credentials; in production https only and public addresses (the egress rule). */
function checkUrl(ctx: AppContext, raw: string): string {
  const url = assertFetchableUrl(raw, ctx.config.isProduction, ctx.config.egressAllow);
  if (ctx.config.isProduction && url.protocol !== 'https:')
    throw new SvcError('url_not_allowed', 'Webhook URLs must use https in production', {
      errors: [{ path: 'url', message: 'must be an https URL' }],
    });
  return url.toString();
}

export async function createWebhook(
  ctx: AppContext,
  principal: Principal | undefined,
  input: CreateWebhookInput,
): Promise<CreatedWebhook> {
  const p = assertScope(principal, 'billing:write');
  const url = checkUrl(ctx, input.url);
  const now = ctx.clock.now();
  const secret = `whsec_${randomString(32)}`;
  const id = newId('whe', now);
  await ctx.db.transaction().execute(async (trx) => {
    const { n } = await trx
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', p.orgId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(n) >= MAX_ENDPOINTS)
      throw new SvcError('conflict', `An org may have ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
    await trx
      .insertInto('webhook_endpoints')
      .values({
        id,
        org_id: p.orgId,
        url,
        description: input.description ?? null,
        events: [...new Set(input.events)].join(' '),
        secret_enc: encryptSecret(ctx.secretKey, secret),
        disabled_reason: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
  });
  return { id, secret, endpoint: await getWebhook(ctx, p, id) };
}

async function ownedEndpoint(db: Db, orgId: string, id: string): Promise<EndpointRow> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw new SvcError('not_found', `No webhook endpoint ${id} in this org (list them: GET /v1/webhooks)`);
  return row;
}

export async function getWebhook(
  ctx: AppContext,
  principal: Principal | undefined,
  id: string,
): Promise<WebhookEndpoint> {
  const p = assertScope(principal, 'billing:write');
  return toEndpoint(await ownedEndpoint(ctx.db, p.orgId, id));
}

export async function listWebhooks(
  ctx: AppContext,
  principal: Principal | undefined,
  page: { limit: number; offset: number },
): Promise<{ data: WebhookEndpoint[]; limit: number; offset: number; has_more: boolean }> {
  const p = assertScope(principal, 'billing:write');
  const rows = await ctx.db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('org_id', '=', p.orgId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'desc')
    .limit(page.limit + 1)
    .offset(page.offset)
    .execute();
  return {
    data: rows.slice(0, page.limit).map(toEndpoint),
    limit: page.limit,
    offset: page.offset,
    has_more: rows.length > page.limit,
  };
}

/** Deletes the endpoint; its pending deliveries fail (nothing more is sent to it). */
export async function deleteWebhook(ctx: AppContext, principal: Principal | undefined, id: string): Promise<void> {
  const p = assertScope(principal, 'billing:write');
  await ownedEndpoint(ctx.db, p.orgId, id);
  const now = ctx.clock.now();
  await ctx.db.transaction().execute(async (trx) => {
    await trx.updateTable('webhook_endpoints').set({ deleted_at: now, updated_at: now }).where('id', '=', id).execute();
    await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', last_error: 'endpoint deleted' })
      .where('endpoint_id', '=', id)
      .where('status', '=', 'pending')
      .execute();
  });
}

/** Enables a disabled endpoint again (its failing run starts over). */
export async function enableWebhook(
  ctx: AppContext,
  principal: Principal | undefined,
  id: string,
): Promise<WebhookEndpoint> {
  const p = assertScope(principal, 'billing:write');
  await ownedEndpoint(ctx.db, p.orgId, id);
  await ctx.db
    .updateTable('webhook_endpoints')
    .set({ status: 'enabled', disabled_reason: null, failing_since: null, updated_at: ctx.clock.now() })
    .where('id', '=', id)
    .execute();
  return getWebhook(ctx, p, id);
}

/** Queues a `webhook.test` event to this endpoint alone; the delivery log shows how it went. */
export async function testWebhook(
  ctx: AppContext,
  principal: Principal | undefined,
  id: string,
): Promise<{ event_id: string }> {
  const p = assertScope(principal, 'billing:write');
  const ep = await ownedEndpoint(ctx.db, p.orgId, id);
  if (ep.status !== 'enabled')
    throw new SvcError('invalid_state', 'This endpoint is disabled: enable it first (POST /v1/webhooks/{id}/enable)');
  const now = ctx.clock.now();
  const eventId = await ctx.db.transaction().execute((trx) =>
    emitEvent(
      trx,
      {
        orgId: p.orgId,
        type: 'webhook.test',
        data: { endpoint_id: id, message: 'A test event from svc' },
        endpointId: id,
      },
      now,
    ),
  );
  return { event_id: eventId! };
}

type DeliveryRow = {
  id: string;
  event_id: string;
  type: string;
  endpoint_id: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  last_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
};

function toDelivery(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id,
    object: 'webhook_delivery',
    event_id: r.event_id,
    event_type: r.type,
    endpoint_id: r.endpoint_id,
    status: r.status,
    attempts: r.attempts,
    next_attempt_at: r.status === 'pending' ? iso(r.next_attempt_at) : null,
    last_attempt_at: iso(r.last_attempt_at),
    last_status_code: r.last_status_code,
    last_error: r.last_error,
    delivered_at: iso(r.delivered_at),
    created_at: iso(r.created_at),
  };
}

function deliveryQuery(db: Db) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.event_id',
      'e.type',
      'd.endpoint_id',
      'd.status',
      'd.attempts',
      'd.next_attempt_at',
      'd.last_attempt_at',
      'd.last_status_code',
      'd.last_error',
      'd.delivered_at',
      'd.created_at',
    ]);
}

/** The delivery log of one endpoint, newest first. */
export async function listDeliveries(
  ctx: AppContext,
  principal: Principal | undefined,
  endpointId: string,
  page: { limit: number; offset: number },
): Promise<{ data: WebhookDelivery[]; limit: number; offset: number; has_more: boolean }> {
  const p = assertScope(principal, 'billing:write');
  await ownedEndpoint(ctx.db, p.orgId, endpointId);
  const rows = await deliveryQuery(ctx.db)
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(page.limit + 1)
    .offset(page.offset)
    .execute();
  return {
    data: rows.slice(0, page.limit).map(toDelivery),
    limit: page.limit,
    offset: page.offset,
    has_more: rows.length > page.limit,
  };
}

/** Sends a delivery again now (same event id, so a receiver that already has it can dedupe). */
export async function replayDelivery(
  ctx: AppContext,
  principal: Principal | undefined,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const p = assertScope(principal, 'billing:write');
  const row = await deliveryQuery(ctx.db)
    .where('d.id', '=', deliveryId)
    .where('d.org_id', '=', p.orgId)
    .executeTakeFirst();
  if (!row) throw new SvcError('not_found', `No webhook delivery ${deliveryId} in this org`);
  const ep = await ownedEndpoint(ctx.db, p.orgId, row.endpoint_id);
  if (ep.status !== 'enabled')
    throw new SvcError('invalid_state', 'This endpoint is disabled: enable it first (POST /v1/webhooks/{id}/enable)');
  const now = ctx.clock.now();
  // A fresh 3-day window from the replay.
  await ctx.db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: now, created_at: now })
    .where('id', '=', deliveryId)
    .execute();
  const again = await deliveryQuery(ctx.db).where('d.id', '=', deliveryId).executeTakeFirstOrThrow();
  return toDelivery(again);
}

export async function getAlertSettings(ctx: AppContext, principal: Principal | undefined): Promise<AlertSettings> {
  const p = assertScope(principal, 'billing:write');
  const row = await ctx.db
    .selectFrom('org_alert_settings')
    .select(['balance_low_cents', 'email_alerts'])
    .where('org_id', '=', p.orgId)
    .executeTakeFirst();
  return {
    balance_low_cents: row?.balance_low_cents ?? null,
    effective_balance_low_cents: await balanceLowThreshold(ctx.db, p.orgId),
    email_alerts: (row?.email_alerts ?? 1) === 1,
  };
}

export async function patchAlertSettings(
  ctx: AppContext,
  principal: Principal | undefined,
  input: PatchAlertSettings,
): Promise<AlertSettings> {
  const p = assertScope(principal, 'billing:write');
  const now = ctx.clock.now();
  const current = await getAlertSettings(ctx, p);
  const next = {
    balance_low_cents: input.balance_low_cents === undefined ? current.balance_low_cents : input.balance_low_cents,
    email_alerts: (input.email_alerts ?? current.email_alerts) ? 1 : 0,
  };
  await ctx.db
    .insertInto('org_alert_settings')
    .values({ org_id: p.orgId, ...next, updated_at: now })
    .onConflict((oc) => oc.column('org_id').doUpdateSet({ ...next, updated_at: now }))
    .execute();
  return getAlertSettings(ctx, p);
}

export type { WebhookEventType };
