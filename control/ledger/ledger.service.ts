/**
 * The org credit ledger: append-only entries, and the `balances` projection updated in the same transaction.
 * Invariants (control/ledger/README.md): credit_cents = sum(settled amounts); never below 0 or below reserved.
 * Callers run these inside `db.transaction()` (BEGIN IMMEDIATE), so check and write are one atomic step.
 */
import { sql } from 'kysely';
import type { Db, LedgerKind, Row } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { recordChange } from '../../core/db/changes.js';

export interface EntryInput {
  orgId: string;
  keyId?: string | null;
  kind: LedgerKind;
  /** Signed cents: credits > 0, charges < 0. */
  amountCents: number;
  status?: 'settled' | 'pending';
  reason?: string | null;
  refType?: string | null;
  refId?: string | null;
  /** Unique per effect: a retry with the same key applies nothing and returns the first entry. */
  idempotencyKey: string;
}

export interface PostResult {
  applied: boolean;
  entry: Row<'ledger_entries'>;
}

/** @internal Inside the transaction that creates an org. */
export async function ensureBalanceRow(db: Db, orgId: string, now: number): Promise<void> {
  await db
    .insertInto('balances')
    .values({ org_id: orgId, updated_at: now })
    .onConflict((oc) => oc.column('org_id').doNothing())
    .execute();
}

/** @internal The ledger write every money path composes (checkout, verification grant, `svc-admin credits grant`). */
export async function postEntry(db: Db, input: EntryInput, now: number): Promise<PostResult> {
  if (!Number.isSafeInteger(input.amountCents)) throw new RangeError('amountCents must be an integer');
  // Call charges are left out of the unique index (0005: the gateway's usage row makes them unique), so they
  // are looked up within the org instead (only tests and tools post them here).
  const existing =
    input.kind === 'call_charge'
      ? await db
          .selectFrom('ledger_entries')
          .selectAll()
          .where('org_id', '=', input.orgId)
          .where('kind', '=', 'call_charge')
          .where('idempotency_key', '=', input.idempotencyKey)
          .executeTakeFirst()
      : await db
          .selectFrom('ledger_entries')
          .selectAll()
          .where('idempotency_key', '=', input.idempotencyKey)
          .where(sql<boolean>`kind <> 'call_charge'`)
          .executeTakeFirst(); // a literal: SQLite matches it to the partial index
  if (existing) return { applied: false, entry: existing };
  const status = input.status ?? 'settled';
  await ensureBalanceRow(db, input.orgId, now);
  if (status === 'settled' && input.amountCents < 0) {
    const bal = await db
      .selectFrom('balances')
      .select(['credit_cents', 'reserved_cents'])
      .where('org_id', '=', input.orgId)
      .executeTakeFirstOrThrow();
    if (bal.credit_cents - bal.reserved_cents + input.amountCents < 0) {
      throw new SvcError(
        'insufficient_credits',
        `Balance ${bal.credit_cents - bal.reserved_cents} cents available, ${-input.amountCents} needed`,
      );
    }
  }
  const entry: Row<'ledger_entries'> = {
    id: newId('txn', now),
    org_id: input.orgId,
    key_id: input.keyId ?? null,
    kind: input.kind,
    status,
    amount_cents: input.amountCents,
    reason: input.reason ?? null,
    ref_type: input.refType ?? null,
    ref_id: input.refId ?? null,
    idempotency_key: input.idempotencyKey,
    created_at: now,
  };
  await db.insertInto('ledger_entries').values(entry).execute();
  if (status === 'settled') {
    await db
      .updateTable('balances')
      .set({ credit_cents: sql`credit_cents + ${input.amountCents}`, updated_at: now })
      .where('org_id', '=', input.orgId)
      .execute();
  } else {
    await db
      .updateTable('balances')
      .set({ pending_cents: sql`pending_cents + ${input.amountCents}`, updated_at: now })
      .where('org_id', '=', input.orgId)
      .execute();
  }
  await recordChange(db, 'org', input.orgId, now);
  return { applied: true, entry };
}

/**
 * Settles a pending (withheld) entry: appends the settled twin; idempotent per pending entry.
 * @internal Inside the email verification transaction.
 */
export async function releasePending(
  db: Db,
  pending: Row<'ledger_entries'>,
  reason: string,
  now: number,
): Promise<PostResult> {
  if (pending.status !== 'pending') throw new Error('releasePending needs a pending entry');
  const result = await postEntry(
    db,
    {
      orgId: pending.org_id,
      kind: pending.kind,
      amountCents: pending.amount_cents,
      reason,
      refType: 'pending_release',
      refId: pending.id,
      idempotencyKey: `release:${pending.id}`,
    },
    now,
  );
  if (result.applied) {
    await db
      .updateTable('balances')
      .set({ pending_cents: sql`pending_cents - ${pending.amount_cents}`, updated_at: now })
      .where('org_id', '=', pending.org_id)
      .execute();
  }
  return result;
}

export interface BalanceView {
  credit_cents: number;
  pending_cents: number;
  reserved_cents: number;
}

/**
 * The org's balance as its ledger has it. On PostgreSQL a gateway's settle batch bumps only its own lease row
 * (`balance_leases.unfolded_cents`) and folds that spend into `balances` later (gateway/pg/fold.ts), so the row's
 * credit and reserved amounts both still hold the unfolded spend until then: subtracting it here makes a balance
 * read right after a paid call show that call (docs/scale-out.md "The fold"). On SQLite the sum is always 0.
 * @internal Read by services that authorized (billingStatus, describeMe).
 */
export async function getBalance(db: Db, orgId: string): Promise<BalanceView> {
  const row = await db
    .selectFrom('balances')
    .select((eb) => [
      'credit_cents',
      'pending_cents',
      'reserved_cents',
      eb
        .selectFrom('balance_leases')
        .select(sql<number>`COALESCE(SUM(unfolded_cents), 0)`.as('u'))
        .where('balance_leases.org_id', '=', orgId)
        .where('balance_leases.released_at', 'is', null)
        .as('unfolded_cents'),
    ])
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  if (!row) return { credit_cents: 0, pending_cents: 0, reserved_cents: 0 };
  const unfolded = Number(row.unfolded_cents ?? 0);
  return {
    credit_cents: row.credit_cents - unfolded,
    pending_cents: row.pending_cents,
    reserved_cents: row.reserved_cents - unfolded,
  };
}

export interface LedgerMismatch {
  org_id: string;
  credit_cents: number;
  settled_sum: number;
  pending_cents: number;
  pending_sum: number;
  /**
   * Charges settled against open leases but not yet folded into `balances` (PostgreSQL's settle batch bumps only
   * its lease row; gateway/pg/README.md). Always 0 on SQLite. The projection holds as credit = settled + unfolded.
   */
  unfolded_cents: number;
}

/**
 * Orgs whose projection disagrees with their entries; [] when the books balance.
 * @internal The operator's books check.
 */
export async function checkLedgerConsistency(db: Db): Promise<LedgerMismatch[]> {
  const rows = await sql<LedgerMismatch>`
    SELECT b.org_id, b.credit_cents, b.pending_cents,
      COALESCE((SELECT SUM(amount_cents) FROM ledger_entries e WHERE e.org_id = b.org_id AND e.status = 'settled'), 0) AS settled_sum,
      COALESCE((SELECT SUM(amount_cents) FROM ledger_entries e WHERE e.org_id = b.org_id AND e.status = 'pending'), 0)
        - COALESCE((SELECT SUM(amount_cents) FROM ledger_entries e WHERE e.org_id = b.org_id AND e.status = 'settled' AND e.ref_type = 'pending_release'), 0) AS pending_sum,
      COALESCE((SELECT SUM(unfolded_cents) FROM balance_leases l WHERE l.org_id = b.org_id AND l.released_at IS NULL), 0) AS unfolded_cents
    FROM balances b`.execute(db);
  return rows.rows.filter(
    (r) => r.credit_cents !== r.settled_sum + r.unfolded_cents || r.pending_cents !== r.pending_sum,
  );
}
