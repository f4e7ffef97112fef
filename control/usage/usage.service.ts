/**
 * A consumer org's usage history: totals, per listing, per key and per UTC day over [from, to), plus the
 * newest call records. Read from `usage_events`, which the gateway writes in the same commit as the charge.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { utcDayText } from '../../core/db/dialect.js';
import { DAY_MS } from '../../core/clock.js';
import { SvcError } from '../../core/errors.js';
import {
  USAGE_DEFAULT_DAYS,
  USAGE_MAX_DAYS,
  type UsageQueryInput,
  type UsageSummary,
} from '../../core/schemas/usage.schemas.js';
import type { AppContext } from '../context.js';
import { assertScope, type Principal } from '../auth/principal.js';

/** GET /v1/usage (and get_usage): the window defaults to the last USAGE_DEFAULT_DAYS days and spans at most USAGE_MAX_DAYS. */
export async function usageForWindow(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  caller: Principal | undefined,
  q: UsageQueryInput,
): Promise<UsageSummary> {
  const { orgId } = assertScope(caller, 'usage:read');
  const to = q.to ?? ctx.clock.now();
  const from = q.from ?? to - USAGE_DEFAULT_DAYS * DAY_MS;
  if (from >= to)
    throw new SvcError('validation_failed', '`from` must be before `to`', {
      errors: [{ path: 'from', message: 'must be before to' }],
    });
  if (to - from > USAGE_MAX_DAYS * DAY_MS)
    throw new SvcError('validation_failed', `The range may span at most ${USAGE_MAX_DAYS} days`, {
      errors: [{ path: 'from', message: `range over ${USAGE_MAX_DAYS} days` }],
    });
  return _usageSummary(ctx.db, { orgId, from, to, keyId: q.key_id, limit: q.limit, offset: q.offset });
}

export interface UsageQuery {
  orgId: string;
  from: number;
  to: number;
  keyId?: string | undefined;
  limit: number;
  offset: number;
}

/** The caller's usage over [from, to), any span (the dashboard's charts and CSV); usageForWindow bounds it for the API. */
export function usageSummary(
  db: Db,
  caller: Principal | undefined,
  q: Omit<UsageQuery, 'orgId'>,
): Promise<UsageSummary> {
  const { orgId } = assertScope(caller, 'usage:read');
  return _usageSummary(db, { ...q, orgId });
}

async function _usageSummary(db: Db, q: UsageQuery): Promise<UsageSummary> {
  let base = db
    .selectFrom('usage_events')
    .where('usage_events.org_id', '=', q.orgId)
    .where('usage_events.created_at', '>=', q.from)
    .where('usage_events.created_at', '<', q.to);
  if (q.keyId) base = base.where('usage_events.key_id', '=', q.keyId);

  const calls = sql<number>`COUNT(*)`;
  const charged = sql<number>`COALESCE(SUM(usage_events.charged_cents), 0)`;
  const failed = sql<number>`SUM(CASE WHEN usage_events.status >= 500 OR usage_events.error_code IS NOT NULL THEN 1 ELSE 0 END)`;

  const [totals, byApi, byKey, byDay, events] = await Promise.all([
    base.select([calls.as('calls'), charged.as('charged_cents'), failed.as('failed_calls')]).executeTakeFirstOrThrow(),
    base
      .innerJoin('apis', 'apis.id', 'usage_events.api_id')
      .select(['usage_events.api_id', 'apis.slug', calls.as('calls'), charged.as('charged_cents')])
      // PostgreSQL wants every selected column grouped (the slug depends on apis.id, not on usage_events.api_id).
      .groupBy(['usage_events.api_id', 'apis.slug'])
      .orderBy('charged_cents', 'desc')
      .execute(),
    base
      .select(['usage_events.key_id', calls.as('calls'), charged.as('charged_cents')])
      .groupBy('usage_events.key_id')
      .orderBy('charged_cents', 'desc')
      .execute(),
    base
      .select([
        utcDayText(db, sql.ref('usage_events.created_at')).as('day'),
        calls.as('calls'),
        charged.as('charged_cents'),
      ])
      .groupBy('day')
      .orderBy('day')
      .execute(),
    base
      .leftJoin('apis', 'apis.id', 'usage_events.api_id')
      .leftJoin('endpoints', 'endpoints.id', 'usage_events.endpoint_id')
      .select([
        'usage_events.id',
        'usage_events.key_id',
        'apis.slug',
        'usage_events.endpoint_id',
        'endpoints.path',
        'usage_events.method',
        'usage_events.status',
        'usage_events.latency_ms',
        'usage_events.price_cents',
        'usage_events.charged_cents',
        'usage_events.error_code',
        'usage_events.created_at',
      ])
      .orderBy('usage_events.created_at', 'desc')
      .orderBy('usage_events.id', 'desc')
      .limit(q.limit + 1)
      .offset(q.offset)
      .execute(),
  ]);

  return {
    from: new Date(q.from).toISOString(),
    to: new Date(q.to).toISOString(),
    totals: { calls: totals.calls, charged_cents: totals.charged_cents, failed_calls: totals.failed_calls ?? 0 },
    by_api: byApi,
    by_key: byKey,
    by_day: byDay,
    events: {
      data: events
        .slice(0, q.limit)
        .map((e) => ({ ...e, request_id: e.id, created_at: new Date(e.created_at).toISOString() })),
      limit: q.limit,
      offset: q.offset,
      has_more: events.length > q.limit,
    },
  };
}
