/**
 * Per-endpoint pricing rules (control/pricing/README.md): decreases apply at once, increases on a listing that has
 * ever been published are scheduled for the notice period and applied by `applyDuePriceChanges`; `endpoints.price_cents` is always the price in force.
 */
import { AUDIENCE_WINDOW_MS, emitToOrgs, recentCallerOrgs } from '../webhooks/events.js';
import type { AppContext } from '../context.js';
import type { Db, Row } from '../../core/db/database.js';
import { recordChange } from '../../core/db/changes.js';
import { DAY_MS } from '../../core/clock.js';
import { SvcError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { getOwnedApi } from '../providers/apis.repo.js';
import { parseDiscounts, priceForNextCall, type DiscountTier } from '../../core/discounts.js';
import { intervalJob } from '../lib/interval-job.js';
import { assertScope, type Principal } from '../auth/principal.js';

export interface PriceInput {
  endpoint_id: string;
  price_cents: number;
  discounts?: DiscountTier[] | undefined;
}

export interface PriceOutcome {
  endpoint_id: string;
  outcome: 'applied' | 'scheduled' | 'unchanged';
  price_cents: number;
  effective_at: number;
}

/**
 * True when some call would cost more under the new (price, tiers) than under the old. Both price curves are step
 * functions of the monthly call count that change only at tier thresholds, so checking 0 and every threshold is exact.
 * @public Pure price comparison.
 */
export function isIncrease(
  oldPrice: number,
  oldTiers: readonly DiscountTier[],
  newPrice: number,
  newTiers: readonly DiscountTier[],
): boolean {
  const points = new Set([0, ...oldTiers.map((t) => t.min_calls), ...newTiers.map((t) => t.min_calls)]);
  for (const n of points)
    if (priceForNextCall(newPrice, newTiers, n) > priceForNextCall(oldPrice, oldTiers, n)) return true;
  return false;
}

// Long: one transaction: check the new price, compare it with the current one, apply or schedule it, record the change
// for the gateway; the steps share the old price.
export async function setPricing(
  ctx: AppContext,
  caller: Principal | undefined,
  apiId: string,
  inputs: PriceInput[],
): Promise<PriceOutcome[]> {
  const { orgId } = assertScope(caller, 'provider:write');
  await getOwnedApi(ctx.db, orgId, apiId);
  const ids = new Set<string>();
  for (const i of inputs) {
    if (ids.has(i.endpoint_id))
      throw new SvcError('validation_failed', `endpoint ${i.endpoint_id} appears twice`, {
        errors: [{ path: 'endpoints', message: 'duplicate endpoint_id' }],
      });
    ids.add(i.endpoint_id);
  }
  const now = ctx.clock.now();
  const noticeMs = ctx.config.priceNoticeDays * DAY_MS;
  return ctx.db.transaction().execute(async (trx) => {
    const api = await trx
      .selectFrom('apis')
      .select(['status', 'published_at'])
      .where('id', '=', apiId)
      .executeTakeFirstOrThrow();
    // Once published, consumers may rely on the price: unpublish, raise, republish must not skip the notice.
    const needsNotice = api.published_at !== null;
    const rows = await trx
      .selectFrom('endpoints')
      .selectAll()
      .where('api_id', '=', apiId)
      .where('removed_at', 'is', null)
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    const out: PriceOutcome[] = [];
    for (const input of inputs) {
      const ep = byId.get(input.endpoint_id);
      if (!ep)
        throw new SvcError('not_found', `No endpoint ${input.endpoint_id} on this listing`, {
          extra: { endpoint_id: input.endpoint_id },
        });
      const oldTiers = parseDiscounts(ep.discounts_json);
      const newTiers = input.discounts ?? oldTiers;
      const discountsChanged = JSON.stringify(newTiers) !== JSON.stringify(oldTiers);
      await cancelPendingRows(trx, ep.id, now);
      if (input.price_cents === ep.price_cents && !discountsChanged) {
        out.push({ endpoint_id: ep.id, outcome: 'unchanged', price_cents: ep.price_cents, effective_at: now });
        continue;
      }
      const change = {
        id: newId('prc', now),
        api_id: apiId,
        endpoint_id: ep.id,
        old_price_cents: ep.price_cents,
        new_price_cents: input.price_cents,
        old_discounts_json: discountsChanged ? ep.discounts_json : null,
        new_discounts_json: discountsChanged ? JSON.stringify(newTiers) : null,
        created_at: now,
        cancelled_at: null,
      };
      if (needsNotice && isIncrease(ep.price_cents, oldTiers, input.price_cents, newTiers)) {
        await trx
          .insertInto('price_changes')
          .values({ ...change, status: 'pending', effective_at: now + noticeMs })
          .execute();
        out.push({
          endpoint_id: ep.id,
          outcome: 'scheduled',
          price_cents: input.price_cents,
          effective_at: now + noticeMs,
        });
      } else {
        await trx
          .insertInto('price_changes')
          .values({ ...change, status: 'applied', effective_at: now })
          .execute();
        await applyToEndpoint(trx, ep, input.price_cents, discountsChanged ? JSON.stringify(newTiers) : null, now);
        if (api.status === 'live') await priceActivity(trx, apiId, ep, input.price_cents, now);
        out.push({ endpoint_id: ep.id, outcome: 'applied', price_cents: input.price_cents, effective_at: now });
      }
    }
    await recordChange(trx, 'api', apiId, now);
    await announceIncreases(trx, apiId, out, now);
    return out;
  });
}

/** `listing.price_increase_scheduled` to every org that called the listing in the last 30 days. */
async function announceIncreases(trx: Db, apiId: string, outcomes: PriceOutcome[], now: number): Promise<void> {
  const scheduled = outcomes.filter((o) => o.outcome === 'scheduled');
  if (scheduled.length === 0) return;
  const api = await trx.selectFrom('apis').select(['slug', 'name']).where('id', '=', apiId).executeTakeFirstOrThrow();
  const orgs = await recentCallerOrgs(trx, apiId, now - AUDIENCE_WINDOW_MS);
  const endpoints = await trx
    .selectFrom('endpoints')
    .select(['id', 'method', 'path', 'price_cents'])
    .where(
      'id',
      'in',
      scheduled.map((o) => o.endpoint_id),
    )
    .execute();
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  await emitToOrgs(
    trx,
    orgs,
    {
      type: 'listing.price_increase_scheduled',
      data: {
        api_id: apiId,
        slug: api.slug,
        name: api.name,
        endpoints: scheduled.map((o) => ({
          endpoint_id: o.endpoint_id,
          method: byId.get(o.endpoint_id)?.method ?? null,
          path: byId.get(o.endpoint_id)?.path ?? null,
          old_price_cents: byId.get(o.endpoint_id)?.price_cents ?? null,
          new_price_cents: o.price_cents,
          effective_at: new Date(o.effective_at).toISOString(),
        })),
      },
      // One announcement per schedule: a new schedule (another set of changes) announces again.
      dedupeKey: `prices:${apiId}:${now}`,
    },
    now,
  );
}

export async function cancelPendingPricing(
  ctx: AppContext,
  caller: Principal | undefined,
  apiId: string,
  endpointId: string,
): Promise<Row<'price_changes'> & { status: 'cancelled'; cancelled_at: number }> {
  const { orgId } = assertScope(caller, 'provider:write');
  await getOwnedApi(ctx.db, orgId, apiId);
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const pending = await trx
      .selectFrom('price_changes')
      .selectAll()
      .where('api_id', '=', apiId)
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (!pending) throw new SvcError('not_found', `No pending price increase for endpoint ${endpointId}`);
    await cancelPendingRows(trx, endpointId, now);
    await recordChange(trx, 'api', apiId, now);
    return { ...pending, status: 'cancelled' as const, cancelled_at: now };
  });
}

/**
 * Background job body: applies every pending change whose effective time has come. Returns how many it applied.
 * @internal The price schedule job.
 */
export async function applyDuePriceChanges(db: Db, now: number): Promise<number> {
  const due = await db
    .selectFrom('price_changes')
    .select(['id'])
    .where('status', '=', 'pending')
    .where('effective_at', '<=', now)
    .limit(500)
    .execute();
  let applied = 0;
  for (const { id } of due) {
    await db.transaction().execute(async (trx) => {
      // Re-read inside the write lock: a concurrent cancel must win if it committed first.
      const pc = await trx
        .selectFrom('price_changes')
        .selectAll()
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (!pc) return;
      const ep = await trx
        .selectFrom('endpoints')
        .selectAll()
        .where('id', '=', pc.endpoint_id)
        .executeTakeFirstOrThrow();
      await trx.updateTable('price_changes').set({ status: 'applied' }).where('id', '=', id).execute();
      await applyToEndpoint(trx, ep, pc.new_price_cents, pc.new_discounts_json, now);
      await priceActivity(trx, pc.api_id, ep, pc.new_price_cents, now);
      await recordChange(trx, 'api', pc.api_id, now);
      applied++;
    });
  }
  return applied;
}

async function cancelPendingRows(trx: Db, endpointId: string, now: number): Promise<void> {
  await trx
    .updateTable('price_changes')
    .set({ status: 'cancelled', cancelled_at: now })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}

async function applyToEndpoint(
  trx: Db,
  ep: Row<'endpoints'>,
  price: number,
  discountsJson: string | null,
  now: number,
): Promise<void> {
  await trx
    .updateTable('endpoints')
    .set({ price_cents: price, ...(discountsJson === null ? {} : { discounts_json: discountsJson }), updated_at: now })
    .where('id', '=', ep.id)
    .execute();
}

async function priceActivity(trx: Db, apiId: string, ep: Row<'endpoints'>, price: number, now: number): Promise<void> {
  const api = await trx.selectFrom('apis').select(['org_id', 'slug']).where('id', '=', apiId).executeTakeFirstOrThrow();
  await trx
    .insertInto('activity')
    .values({
      id: newId('act', now),
      kind: 'price_change',
      api_id: apiId,
      org_id: api.org_id,
      data_json: JSON.stringify({
        slug: api.slug,
        endpoint_id: ep.id,
        method: ep.method,
        path: ep.path,
        old_price_cents: ep.price_cents,
        new_price_cents: price,
      }),
      created_at: now,
    })
    .execute();
}

export const PRICE_JOB_INTERVAL_MS = 1_000;

/** @internal The price schedule job. */
export function priceScheduleJob(ctx: AppContext): () => void {
  return intervalJob(
    ctx.log,
    'price schedule job',
    PRICE_JOB_INTERVAL_MS,
    () => applyDuePriceChanges(ctx.db, ctx.clock.now()),
    { db: ctx.db },
  );
}
