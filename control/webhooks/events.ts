/**
 * Emitting an event: one `webhook_events` row (its id stable across every retry, so receivers dedupe on it) and one
 * pending delivery per enabled endpoint of the org subscribed to its type, written in the caller's transaction —
 * the event exists exactly when what it announces committed (an outbox). Delivery happens later (delivery.ts).
 */
import type { Db } from '../../core/db/database.js';
import { numOf } from '../../core/db/id-nums.js';
import { newId } from '../../core/ids.js';
import type { WebhookEventType } from '../../core/schemas/webhooks.schemas.js';

export interface EmitInput {
  orgId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
  /** What this event is about, unique per org and type: a second emit with the same key does nothing. */
  dedupeKey?: string;
  /** Only this endpoint (a test-send); otherwise every subscribed enabled endpoint of the org. */
  endpointId?: string;
}

/** Returns the event id, or null when an event with the same dedupe key was already emitted. */
export async function emitEvent(trx: Db, e: EmitInput, now: number): Promise<string | null> {
  const id = newId('evt', now);
  const inserted = await trx
    .insertInto('webhook_events')
    .values({
      id,
      org_id: e.orgId,
      type: e.type,
      data_json: JSON.stringify(e.data),
      dedupe_key: e.dedupeKey ?? null,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(['org_id', 'type', 'dedupe_key']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return null;
  let q = trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'events'])
    .where('org_id', '=', e.orgId)
    .where('status', '=', 'enabled')
    .where('deleted_at', 'is', null);
  if (e.endpointId) q = q.where('id', '=', e.endpointId);
  const endpoints = (await q.execute()).filter(
    (ep) => e.endpointId !== undefined || ep.events.split(' ').includes(e.type),
  );
  if (endpoints.length > 0)
    await trx
      .insertInto('webhook_deliveries')
      .values(
        endpoints.map((ep) => ({
          id: newId('whd', now),
          event_id: id,
          endpoint_id: ep.id,
          org_id: e.orgId,
          next_attempt_at: now,
          created_at: now,
        })),
      )
      .execute();
  return id;
}

/** Emits one event to each org in `orgIds` (e.g. every recent caller of a listing). */
export async function emitToOrgs(
  trx: Db,
  orgIds: readonly string[],
  e: Omit<EmitInput, 'orgId'>,
  now: number,
): Promise<number> {
  let n = 0;
  for (const orgId of orgIds) if (await emitEvent(trx, { ...e, orgId }, now)) n++;
  return n;
}

/** Orgs that called the listing since `since` (the audience of price and terms announcements). */
export async function recentCallerOrgs(trx: Db, apiId: string, since: number): Promise<string[]> {
  const rows = await trx
    .selectFrom('id_nums')
    .select('id_nums.id')
    .where(
      'id_nums.num',
      'in',
      trx
        .selectFrom('usage_calls')
        .select('org_num')
        .where('api_num', '=', numOf(apiId))
        .where('created_at', '>=', since),
    )
    .execute();
  return rows.map((r) => r.id);
}

/** The 30 days behind `listing.price_increase_scheduled` and `terms.updated` audiences. */
export const AUDIENCE_WINDOW_MS = 30 * 86_400_000;
