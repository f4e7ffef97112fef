/**
 * The fold: on PostgreSQL a settle batch appends usage, ledger and earning rows and bumps only its own lease row
 * (`spent_cents` and `unfolded_cents`), so no two gateways ever wait on one shared row per batch. The shared
 * counters catch up here, at extend, release, reap and on the housekeeping tick: `unfolded` moves out of
 * `balances` (credit and reserved together), into `api_keys.spent_cents` and `key_daily_spend`.
 *
 * Invariants between folds (checkLedgerConsistency knows the first):
 *   credit_cents   = Σ settled ledger + Σ open leases' unfolded
 *   reserved_cents = Σ open leases' (amount − spent + unfolded)
 *   key headroom   = budget − api_keys.spent − Σ open leases' (amount − spent + unfolded)   (same per day)
 * A settle moves `spent` and `unfolded` up together, so it changes none of the right-hand sides that an
 * acquisition reads: acquisitions stay exact without locking anything a settle writes.
 *
 * Lock order, everywhere: org rows (`balances`, in org-id order), then holder rows, then lease rows.
 */
import { sql, type Q, type Run } from './connect.js';

export type LeaseScope = { holderId: string } | { ids: string[] };

function scope(w: LeaseScope): Q {
  return 'holderId' in w ? sql`holder_id = ${w.holderId}` : sql`id = ANY(${w.ids}::text[])`;
}

/** Locks the org rows (`balances`) of these orgs in id order: the first lock of every lease transaction. */
export function lockOrgs(orgIds: string[]): Q {
  return sql`SELECT 1 FROM balances WHERE org_id = ANY(${[...new Set(orgIds)].sort()}::text[]) ORDER BY org_id FOR UPDATE`;
}

/** Locks the org rows of a holder's open leases in id order (the reaper's first lock). */
export function lockOrgsOfHolder(holderId: string): Q {
  return sql`SELECT 1 FROM balances WHERE org_id IN
               (SELECT DISTINCT org_id FROM balance_leases WHERE holder_id = ${holderId} AND released_at IS NULL)
             ORDER BY org_id FOR UPDATE`;
}

/**
 * Folds the unfolded spend of the open leases in scope into the shared rows. Two statements, unsent, so a
 * caller can pipeline them (the second yields `folded`); the caller holds the org locks (lockOrgs).
 * First the lease rows are locked (`FOR UPDATE`: a settle of this holder on another connection waits, or is
 * waited for); then the fold reads them in a fresh statement snapshot, which sees their latest committed values
 * and nothing can change them until COMMIT.
 */
export function foldLeases(w: LeaseScope, now: number): readonly [Q, Q] {
  return [
    sql`SELECT 1 FROM balance_leases WHERE ${scope(w)} AND released_at IS NULL ORDER BY id FOR UPDATE`,
    sql`
    WITH f0 AS (SELECT id, org_id, key_id, day, unfolded_cents AS u FROM balance_leases
                WHERE ${scope(w)} AND released_at IS NULL AND unfolded_cents > 0),
    f AS (UPDATE balance_leases l SET unfolded_cents = l.unfolded_cents - f0.u FROM f0 WHERE l.id = f0.id
          RETURNING f0.org_id, f0.key_id, f0.day, f0.u),
    fb AS (UPDATE balances b SET credit_cents = b.credit_cents - s.u, reserved_cents = b.reserved_cents - s.u,
             updated_at = ${now}
           FROM (SELECT org_id, sum(u)::bigint AS u FROM f GROUP BY org_id) s WHERE b.org_id = s.org_id RETURNING 1),
    fk AS (UPDATE api_keys k SET spent_cents = k.spent_cents + s.u,
             last_used_at = GREATEST(COALESCE(k.last_used_at, 0), ${now}::bigint)
           FROM (SELECT key_id, sum(u)::bigint AS u FROM f GROUP BY key_id) s WHERE k.id = s.key_id RETURNING 1),
    fd AS (INSERT INTO key_daily_spend (key_id, day, spent_cents)
             SELECT key_id, day, sum(u)::bigint FROM f GROUP BY key_id, day
           ON CONFLICT (key_id, day) DO UPDATE SET spent_cents = key_daily_spend.spent_cents + excluded.spent_cents
           RETURNING 1)
    SELECT COALESCE(sum(u), 0)::bigint AS folded FROM f`,
  ] as const;
}

/**
 * Folds, then releases the open leases in scope and returns their unspent part to the orgs; the cents returned.
 * The caller holds the org locks (lockOrgs). The fold locks the lease rows first, so a settle of this holder
 * cannot slip a charge in between the fold and the release (it waits, then finds the lease released and rolls
 * back).
 */
export async function foldAndRelease(run: Run, w: LeaseScope, now: number): Promise<number> {
  for (const q of foldLeases(w, now)) await run(q);
  const [r] = await run<{ back: number }>(sql`
    WITH rel AS (UPDATE balance_leases SET released_at = ${now} WHERE ${scope(w)} AND released_at IS NULL
                 RETURNING org_id, amount_cents - spent_cents AS back),
    s AS (SELECT org_id, sum(back)::bigint AS back FROM rel GROUP BY org_id),
    u AS (UPDATE balances b SET reserved_cents = b.reserved_cents - s.back, updated_at = ${now}
          FROM s WHERE b.org_id = s.org_id AND s.back > 0 RETURNING 1)
    SELECT COALESCE(sum(back), 0)::bigint AS back FROM s`);
  return r!.back;
}

/** Returns `back[i]` cents of lease `ids[i]` (kept open, smaller) to its org. The caller holds the org locks. */
export async function shrinkLeases(run: Run, holderId: string, ids: string[], back: number[], now: number) {
  await run(sql`
    WITH sh AS (UPDATE balance_leases l SET amount_cents = l.amount_cents - v.back
                FROM unnest(${ids}::text[], ${back}::bigint[]) AS v(id, back)
                WHERE l.id = v.id AND l.holder_id = ${holderId} AND l.released_at IS NULL
                  AND l.amount_cents - v.back >= GREATEST(l.spent_cents, 1)
                RETURNING l.org_id, v.back),
    s AS (SELECT org_id, sum(back)::bigint AS back FROM sh GROUP BY org_id)
    UPDATE balances b SET reserved_cents = b.reserved_cents - s.back, updated_at = ${now}
    FROM s WHERE b.org_id = s.org_id`);
}
