/**
 * A consumer org's usage history: totals, per listing, per key and per UTC day over [from, to), plus the
 * newest call records. Read from `usage_calls` (the narrow row, docs/gateway.md "The usage row"), which the
 * gateway writes in the same commit as the charge.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { numOf } from '../../core/db/id-nums.js';
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

/** The caller's rows over [from, to), optionally of one key, filtered on integer nums. */
function _rows(db: Db, q: UsageQuery) {
  const base = db
    .selectFrom('usage_calls as u')
    .where('u.org_num', '=', numOf(q.orgId))
    .where('u.created_at', '>=', q.from)
    .where('u.created_at', '<', q.to);
  return q.keyId ? base.where('u.key_num', '=', numOf(q.keyId)) : base;
}

/** The newest calls first, one page (plus one row to tell has_more), nums turned back into ids. */
function _events(base: ReturnType<typeof _rows>, q: UsageQuery) {
  return base
    .innerJoin('id_nums as k', 'k.num', 'u.key_num')
    .innerJoin('id_nums as a', 'a.num', 'u.api_num')
    .innerJoin('id_nums as e', 'e.num', 'u.endpoint_num')
    .leftJoin('apis', 'apis.id', 'a.id')
    .leftJoin('endpoints', 'endpoints.id', 'e.id')
    .select([
      'u.request_id',
      'k.id as key_id',
      'apis.slug',
      'e.id as endpoint_id',
      'endpoints.path',
      'u.method',
      'u.status',
      'u.latency_ms',
      'u.price_cents',
      'u.charged_cents',
      'u.error_code',
      'u.created_at',
    ])
    .orderBy('u.created_at', 'desc')
    .orderBy('u.request_id', 'desc')
    .limit(q.limit + 1)
    .offset(q.offset)
    .execute();
}

async function _usageSummary(db: Db, q: UsageQuery): Promise<UsageSummary> {
  // Group on nums; ids (and slugs) are joined only onto the grouped rows.
  const base = _rows(db, q);
  const calls = sql<number>`COUNT(*)`;
  const charged = sql<number>`COALESCE(SUM(u.charged_cents), 0)`;
  const failed = sql<number>`SUM(CASE WHEN u.status >= 500 OR u.error_code IS NOT NULL THEN 1 ELSE 0 END)`;

  const [totals, byApi, byKey, byDay, events] = await Promise.all([
    base.select([calls.as('calls'), charged.as('charged_cents'), failed.as('failed_calls')]).executeTakeFirstOrThrow(),
    db
      .selectFrom(
        base
          .select(['u.api_num', calls.as('calls'), charged.as('charged_cents')])
          .groupBy('u.api_num')
          .as('g'),
      )
      .innerJoin('id_nums as n', 'n.num', 'g.api_num')
      .innerJoin('apis', 'apis.id', 'n.id')
      .select(['n.id as api_id', 'apis.slug', 'g.calls', 'g.charged_cents'])
      .orderBy('g.charged_cents', 'desc')
      .execute(),
    db
      .selectFrom(
        base
          .select(['u.key_num', calls.as('calls'), charged.as('charged_cents')])
          .groupBy('u.key_num')
          .as('g'),
      )
      .innerJoin('id_nums as n', 'n.num', 'g.key_num')
      .select(['n.id as key_id', 'g.calls', 'g.charged_cents'])
      .orderBy('g.charged_cents', 'desc')
      .execute(),
    base
      .select([utcDayText(db, sql.ref('u.created_at')).as('day'), calls.as('calls'), charged.as('charged_cents')])
      .groupBy('day')
      .orderBy('day')
      .execute(),
    _events(base, q),
  ]);

  return {
    from: new Date(q.from).toISOString(),
    to: new Date(q.to).toISOString(),
    totals: { calls: totals.calls, charged_cents: totals.charged_cents, failed_calls: totals.failed_calls ?? 0 },
    by_api: byApi,
    by_key: byKey,
    by_day: byDay,
    events: {
      data: events.slice(0, q.limit).map(({ request_id, ...e }) => ({
        id: request_id,
        request_id,
        ...e,
        created_at: new Date(e.created_at).toISOString(),
      })),
      limit: q.limit,
      offset: q.offset,
      has_more: events.length > q.limit,
    },
  };
}
