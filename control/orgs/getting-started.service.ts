/**
 * The dashboard's guide for one org, from real state only: the getting-started checklist (each step ticks itself
 * when the thing is done), the balance's recent trend, the last calls and open alerts. Read-only; the caller passes
 * the org of its own session.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { getBalance } from '../ledger/ledger.service.js';
import { assertSession, type Principal } from '../auth/principal.js';
import { pendingTerms } from '../terms/pending-terms.service.js';

export interface ChecklistStep {
  id: 'verify_email' | 'add_credits' | 'capped_key' | 'connect_agent' | 'first_call';
  done: boolean;
}

export interface RecentCall {
  slug: string;
  method: string;
  status: number;
  charged_cents: number;
  created_at: number;
}

export interface DashboardGuide {
  steps: ChecklistStep[];
  balance_cents: number;
  /** Net credit change per UTC day over the last 14 days (oldest first), for the trend line. */
  balance_trend: Array<{ day: string; net_cents: number }>;
  last_calls: RecentCall[];
  alerts: Array<{ kind: 'low_balance' | 'cap_reached' | 'terms_waiting'; detail: string; href: string }>;
}

const DAY_MS = 86_400_000;
/** Below this balance (cents) the dashboard warns: a handful of paid calls. */
export const LOW_BALANCE_CENTS = 100;

/**
 * The signed-in person's own org (a session: the dashboard is a person's view).
 * Long: one read of the org's state, then one checklist step per item in the order the dashboard shows them.
 */
export async function dashboardGuide(db: Db, principal: Principal | undefined, now: number): Promise<DashboardGuide> {
  const { orgId } = assertSession(principal);
  const [org, bought, capped, agent, calls, balance, trend, pending, capsHit] = await Promise.all([
    db.selectFrom('orgs').select('email_verified_at').where('id', '=', orgId).executeTakeFirst(),
    db
      .selectFrom('ledger_entries')
      .select('id')
      .where('org_id', '=', orgId)
      .where('kind', 'in', ['purchase', 'auto_reload'])
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('api_keys')
      .select('id')
      .where('org_id', '=', orgId)
      .where('revoked_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('daily_cap_cents', 'is not', null),
          eb('budget_cents', 'is not', null),
          eb('per_call_max_cents', 'is not', null),
        ]),
      )
      .limit(1)
      .executeTakeFirst(),
    // An agent is connected once a key made for one (OAuth or `svc connect`) or an MCP session exists.
    db
      .selectFrom('api_keys')
      .select('id')
      .where('org_id', '=', orgId)
      .where((eb) =>
        eb.or([
          eb('origin', '=', 'oauth'),
          eb.exists(
            eb.selectFrom('mcp_sessions').select('id_hash').whereRef('mcp_sessions.key_id', '=', 'api_keys.id'),
          ),
        ]),
      )
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('usage_events as u')
      .innerJoin('apis as a', 'a.id', 'u.api_id')
      .select(['a.slug', 'u.method', 'u.status', 'u.charged_cents', 'u.created_at'])
      .where('u.org_id', '=', orgId)
      .orderBy('u.created_at', 'desc')
      .limit(5)
      .execute(),
    getBalance(db, orgId),
    db
      .selectFrom('ledger_entries')
      .select([sql<number>`created_at / ${DAY_MS}`.as('d'), sql<number>`sum(amount_cents)`.as('net')])
      .where('org_id', '=', orgId)
      .where('status', '=', 'settled')
      .where('created_at', '>=', now - 14 * DAY_MS)
      .groupBy(sql`created_at / ${DAY_MS}`)
      .execute(),
    pendingTerms(db, principal),
    db
      .selectFrom('api_keys as k')
      .innerJoin('key_daily_spend as s', (j) =>
        j.onRef('s.key_id', '=', 'k.id').on('s.day', '=', Math.floor(now / DAY_MS)),
      )
      .select(['k.name'])
      .where('k.org_id', '=', orgId)
      .where('k.revoked_at', 'is', null)
      .where('k.daily_cap_cents', 'is not', null)
      .whereRef('s.spent_cents', '>=', 'k.daily_cap_cents')
      .limit(5)
      .execute(),
  ]);
  const byDay = new Map(trend.map((r) => [Number(r.d), Number(r.net)]));
  const today = Math.floor(now / DAY_MS);
  const balance_trend = Array.from({ length: 14 }, (_, i) => {
    const d = today - 13 + i;
    return { day: new Date(d * DAY_MS).toISOString().slice(0, 10), net_cents: byDay.get(d) ?? 0 };
  });
  const alerts: DashboardGuide['alerts'] = [];
  if (balance.credit_cents < LOW_BALANCE_CENTS)
    alerts.push({
      kind: 'low_balance',
      detail: 'Your balance is low: paid calls will be refused soon.',
      href: '/dashboard/billing',
    });
  for (const k of capsHit)
    alerts.push({
      kind: 'cap_reached',
      detail: `Key “${k.name}” reached its daily cap for today (UTC).`,
      href: '/dashboard/keys',
    });
  const required = pending.data.filter((t) => t.acceptance_mode === 'required').length;
  if (required > 0)
    alerts.push({
      kind: 'terms_waiting',
      detail: `${required} ${required === 1 ? 'API waits' : 'APIs wait'} for its terms to be accepted.`,
      href: '/dashboard/terms',
    });
  return {
    steps: [
      { id: 'verify_email', done: Boolean(org?.email_verified_at) },
      { id: 'add_credits', done: bought !== undefined },
      { id: 'capped_key', done: capped !== undefined },
      { id: 'connect_agent', done: agent !== undefined },
      { id: 'first_call', done: calls.length > 0 },
    ],
    balance_cents: balance.credit_cents,
    balance_trend,
    last_calls: calls.map((r) => ({ ...r, created_at: Number(r.created_at) })),
    alerts,
  };
}
