/**
 * Money alerts (docs/webhooks.md): `balance.low` when an org's credit falls below its threshold, and
 * `key.cap_reached` when a key's budget or today's daily cap is used up. A detector in the control process finds
 * them every SVC_ALERTS_INTERVAL_MS, so the gateway's paid path does no extra work; each announcement has a dedupe
 * key, so it is made once:
 * - balance.low: once per top-up epoch (the org's newest credit entry): after a purchase or grant it re-arms;
 * - key.cap_reached: once per key and budget value, and once per key and UTC day for the daily cap.
 * Orgs with email alerts on (the default) and a known address are mailed the same announcements.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { formatCents } from '../../core/money.js';
import type { AppContext } from '../context.js';
import { emitEvent } from './events.js';

/** The default threshold: 20 % of the org's last purchase. */
export const DEFAULT_LOW_FRACTION = 0.2;

/** The org's balance.low threshold in cents: its setting, else 20 % of its last purchase, else null (none). */
export async function balanceLowThreshold(db: Db, orgId: string): Promise<number | null> {
  const row = await db
    .selectFrom('org_alert_settings')
    .select('balance_low_cents')
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  if (row?.balance_low_cents != null) return Number(row.balance_low_cents);
  const last = await db
    .selectFrom('payments')
    .select('credit_cents')
    .where('org_id', '=', orgId)
    .where('status', '=', 'succeeded')
    .where('kind', 'in', ['checkout', 'auto_reload'])
    .orderBy('completed_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return last ? Math.floor(Number(last.credit_cents) * DEFAULT_LOW_FRACTION) : null;
}

interface LowCandidate {
  org_id: string;
  credit_cents: number;
  threshold: number;
  epoch: string | null;
}

/** Orgs whose credit is under their threshold, with their current top-up epoch. */
async function lowBalances(db: Db): Promise<LowCandidate[]> {
  const { rows } = await sql<LowCandidate>`
    WITH t AS (
      SELECT b.org_id, b.credit_cents,
        COALESCE(
          (SELECT s.balance_low_cents FROM org_alert_settings s WHERE s.org_id = b.org_id),
          (SELECT CAST(p.credit_cents * ${DEFAULT_LOW_FRACTION} AS INTEGER) FROM payments p
            WHERE p.org_id = b.org_id AND p.status = 'succeeded' AND p.kind IN ('checkout', 'auto_reload')
            ORDER BY p.completed_at DESC LIMIT 1)
        ) AS threshold
      FROM balances b
      WHERE b.org_id IN (SELECT org_id FROM org_alert_settings WHERE balance_low_cents IS NOT NULL)
         OR b.org_id IN (SELECT org_id FROM payments WHERE status = 'succeeded' AND kind IN ('checkout', 'auto_reload'))
    )
    SELECT t.org_id, t.credit_cents, t.threshold,
      (SELECT l.id FROM ledger_entries l WHERE l.org_id = t.org_id AND l.amount_cents > 0 AND l.status = 'settled'
        ORDER BY l.created_at DESC, l.id DESC LIMIT 1) AS epoch
    FROM t WHERE t.threshold IS NOT NULL AND t.credit_cents < t.threshold`.execute(db);
  return rows.map((r) => ({ ...r, credit_cents: Number(r.credit_cents), threshold: Number(r.threshold) }));
}

interface CapCandidate {
  org_id: string;
  key_id: string;
  name: string;
  cap: 'budget' | 'daily';
  cap_cents: number;
  spent_cents: number;
  day: number | null;
}

async function reachedCaps(db: Db, today: number): Promise<CapCandidate[]> {
  const { rows } = await sql<CapCandidate>`
    SELECT org_id, id AS key_id, name, 'budget' AS cap, budget_cents AS cap_cents, spent_cents, NULL AS day
      FROM api_keys WHERE revoked_at IS NULL AND budget_cents IS NOT NULL AND spent_cents >= budget_cents
    UNION ALL
    SELECT k.org_id, k.id, k.name, 'daily', k.daily_cap_cents, d.spent_cents, d.day
      FROM key_daily_spend d JOIN api_keys k ON k.id = d.key_id
      WHERE d.day = ${today} AND k.revoked_at IS NULL AND k.daily_cap_cents IS NOT NULL
        AND d.spent_cents >= k.daily_cap_cents`.execute(db);
  return rows.map((r) => ({
    ...r,
    cap_cents: Number(r.cap_cents),
    spent_cents: Number(r.spent_cents),
    day: r.day === null ? null : Number(r.day),
  }));
}

/** Whether to mail the org, and where. */
async function alertAddress(db: Db, orgId: string): Promise<string | null> {
  const row = await db
    .selectFrom('orgs')
    .leftJoin('org_alert_settings as s', 's.org_id', 'orgs.id')
    .select(['orgs.email', 'orgs.email_verified_at', 's.email_alerts'])
    .where('orgs.id', '=', orgId)
    .executeTakeFirst();
  if (!row?.email || row.email_verified_at === null || row.email_alerts === 0) return null;
  return row.email;
}

/** One detector round; returns the events it emitted. */
export async function detectAlerts(ctx: AppContext): Promise<{ balance_low: number; cap_reached: number }> {
  const now = ctx.clock.now();
  const out = { balance_low: 0, cap_reached: 0 };
  for (const low of await lowBalances(ctx.db)) {
    const id = await ctx.db.transaction().execute((trx) =>
      emitEvent(
        trx,
        {
          orgId: low.org_id,
          type: 'balance.low',
          data: { balance_cents: low.credit_cents, threshold_cents: low.threshold },
          dedupeKey: `epoch:${low.epoch ?? 'none'}`,
        },
        now,
      ),
    );
    if (!id) continue;
    out.balance_low++;
    const to = await alertAddress(ctx.db, low.org_id);
    if (to)
      await ctx.mailer.send({
        to,
        subject: `svc: your balance is low (${formatCents(low.credit_cents)})`,
        text: [
          `Your svc balance is ${formatCents(low.credit_cents)}, under your alert threshold of ${formatCents(low.threshold)}.`,
          'Paid calls stop when it reaches zero. Add credits on the Billing page, or turn on auto-reload.',
          `  ${ctx.urls.control}/dashboard/billing`,
          'To stop these mails: svc alerts set --email-alerts off',
        ].join('\n'),
      });
  }
  const today = Math.floor(now / 86_400_000);
  for (const cap of await reachedCaps(ctx.db, today)) {
    const id = await ctx.db.transaction().execute((trx) =>
      emitEvent(
        trx,
        {
          orgId: cap.org_id,
          type: 'key.cap_reached',
          data: {
            key_id: cap.key_id,
            key_name: cap.name,
            cap: cap.cap,
            cap_cents: cap.cap_cents,
            spent_cents: cap.spent_cents,
          },
          dedupeKey: cap.cap === 'budget' ? `budget:${cap.key_id}:${cap.cap_cents}` : `daily:${cap.key_id}:${cap.day}`,
        },
        now,
      ),
    );
    if (!id) continue;
    out.cap_reached++;
    const to = await alertAddress(ctx.db, cap.org_id);
    if (to)
      await ctx.mailer.send({
        to,
        subject: `svc: key "${cap.name}" reached its ${cap.cap === 'budget' ? 'budget' : 'daily cap'}`,
        text: [
          `The key "${cap.name}" (${cap.key_id}) has spent ${formatCents(cap.spent_cents)} of its ${cap.cap === 'budget' ? 'budget' : 'daily cap'} of ${formatCents(cap.cap_cents)}.`,
          cap.cap === 'budget'
            ? 'Its paid calls are refused until the budget is raised (Keys page, or svc keys patch).'
            : 'Its paid calls are refused until the next UTC day, or until the cap is raised.',
          `  ${ctx.urls.control}/dashboard/keys`,
        ].join('\n'),
      });
  }
  return out;
}
