/**
 * Provider analytics, read-only over what the gateway and billing write: usage_events (calls, gross volume),
 * provider_earnings (gross/fee/net, reversals) and payouts (pending/paid). Window: [from, to) in ms.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { ProviderAnalytics } from '../../core/schemas/providers.schemas.js';
import { assertScope, type Principal } from '../auth/principal.js';

// Long: the provider's analytics are a handful of SQL queries read together (totals, per endpoint, per day); it is
// mostly query text.
export async function providerAnalytics(
  db: Db,
  caller: Principal | undefined,
  from: number,
  to: number,
): Promise<ProviderAnalytics> {
  const { orgId } = assertScope(caller, 'provider:write');
  // Through the provider's api ids, so the query uses usage_api (there is no per-provider usage index: 0005).
  const usage = db
    .selectFrom('usage_events')
    .where('usage_events.api_id', 'in', db.selectFrom('apis').select('apis.id').where('apis.org_id', '=', orgId))
    .where('usage_events.provider_org_id', '=', orgId)
    .where('usage_events.created_at', '>=', from)
    .where('usage_events.created_at', '<', to);
  const totals = await usage
    .select([
      sql<number>`count(*)`.as('calls'),
      sql<number>`coalesce(sum(case when status < 500 then 1 else 0 end), 0)`.as('ok_calls'),
      sql<number>`coalesce(sum(charged_cents), 0)`.as('gross_cents'),
      sql<number>`count(distinct org_id)`.as('consumers'),
    ])
    .executeTakeFirstOrThrow();
  const perEndpoint = await usage
    .innerJoin('endpoints', 'endpoints.id', 'usage_events.endpoint_id')
    .innerJoin('apis', 'apis.id', 'usage_events.api_id')
    .select([
      'usage_events.api_id',
      'apis.slug',
      'usage_events.endpoint_id',
      'endpoints.method',
      'endpoints.path',
      sql<number>`count(*)`.as('calls'),
      sql<number>`coalesce(sum(usage_events.charged_cents), 0)`.as('gross_cents'),
      sql<number>`coalesce(sum(case when usage_events.status < 500 then 1 else 0 end), 0)`.as('ok_calls'),
    ])
    // Every selected column grouped, as PostgreSQL requires (SQLite would pick any row's).
    .groupBy(['usage_events.api_id', 'apis.slug', 'usage_events.endpoint_id', 'endpoints.method', 'endpoints.path'])
    .orderBy('gross_cents', 'desc')
    .execute();
  const earnings = await db
    .selectFrom('provider_earnings')
    .select([
      'kind',
      'api_id',
      sql<number>`coalesce(sum(gross_cents), 0)`.as('gross'),
      sql<number>`coalesce(sum(fee_cents), 0)`.as('fee'),
      sql<number>`coalesce(sum(net_cents), 0)`.as('net'),
    ])
    .where('provider_org_id', '=', orgId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .groupBy(['kind', 'api_id'])
    .execute();
  const payouts = await db
    .selectFrom('payouts')
    .select(['status', sql<number>`coalesce(sum(amount_cents), 0)`.as('amount')])
    .where('provider_org_id', '=', orgId)
    .groupBy('status')
    .execute();
  const lifetimeNet = await db
    .selectFrom('provider_earnings')
    .select(sql<number>`coalesce(sum(net_cents), 0)`.as('net'))
    .where('provider_org_id', '=', orgId)
    .executeTakeFirstOrThrow();

  const sumKind = (kind: string, f: 'gross' | 'fee' | 'net') =>
    earnings.filter((e) => e.kind === kind).reduce((s, e) => s + Number(e[f]), 0);
  const listings = new Map<string, ProviderAnalytics['listings'][number]>();
  for (const r of perEndpoint) {
    const l = listings.get(r.api_id) ?? {
      api_id: r.api_id,
      slug: r.slug,
      calls: 0,
      ok_calls: 0,
      gross_cents: 0,
      fee_cents: 0,
      net_cents: 0,
      endpoints: [],
    };
    l.calls += Number(r.calls);
    l.ok_calls += Number(r.ok_calls);
    l.gross_cents += Number(r.gross_cents);
    l.endpoints.push({
      endpoint_id: r.endpoint_id,
      method: r.method,
      path: r.path,
      calls: Number(r.calls),
      ok_calls: Number(r.ok_calls),
      gross_cents: Number(r.gross_cents),
    });
    listings.set(r.api_id, l);
  }
  for (const e of earnings) {
    const l = e.api_id ? listings.get(e.api_id) : undefined;
    if (l && e.kind !== 'payout') {
      l.fee_cents += Number(e.fee);
      l.net_cents += Number(e.net);
    }
  }
  const status = (s: string) => Number(payouts.find((p) => p.status === s)?.amount ?? 0);
  return {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    calls: Number(totals.calls),
    ok_calls: Number(totals.ok_calls),
    distinct_consumers: Number(totals.consumers),
    gross_volume_cents: Number(totals.gross_cents),
    earnings: {
      gross_cents: sumKind('earning', 'gross') + sumKind('reversal', 'gross'),
      platform_fee_cents: sumKind('earning', 'fee') + sumKind('reversal', 'fee'),
      net_cents: sumKind('earning', 'net') + sumKind('reversal', 'net'),
      reversals_cents: sumKind('reversal', 'net'),
    },
    payouts: {
      pending_cents: status('pending'),
      paid_cents: status('paid'),
      failed_cents: status('failed'),
      /** Net earned over all time minus payouts recorded in the earnings ledger. */
      unpaid_balance_cents: Number(lifetimeNet.net),
    },
    listings: [...listings.values()],
  };
}
