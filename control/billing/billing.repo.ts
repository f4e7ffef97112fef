/** Queries of the billing tables (billing_accounts, payments), taking `db` or a transaction. */
import type { Db, Row } from '../../core/db/database.js';
import type { ProcessorKind } from './payments.js';
import { newId } from '../../core/ids.js';

/** A new `open` payment row (not yet inserted): the one shape every payment starts from. */
export function newOpenPayment(
  p: {
    orgId: string;
    kind: Row<'payments'>['kind'];
    processor: ProcessorKind;
    amountPaidCents?: number;
    creditCents?: number;
    packId?: string | null;
    triggerRef?: string | null;
  },
  now: number,
): Row<'payments'> {
  return {
    id: newId('pay', now),
    org_id: p.orgId,
    kind: p.kind,
    processor: p.processor,
    processor_ref: null,
    pack_id: p.packId ?? null,
    amount_paid_cents: p.amountPaidCents ?? 0,
    credit_cents: p.creditCents ?? 0,
    status: 'open',
    failure_reason: null,
    trigger_ref: p.triggerRef ?? null,
    created_at: now,
    completed_at: null,
  };
}

export async function getAccount(db: Db, orgId: string): Promise<Row<'billing_accounts'> | undefined> {
  return db.selectFrom('billing_accounts').selectAll().where('org_id', '=', orgId).executeTakeFirst();
}

/** The org's billing row, created empty on first use; a processor switch (test <-> stripe) forgets old ids. */
export async function ensureAccount(
  db: Db,
  orgId: string,
  processor: ProcessorKind,
  now: number,
): Promise<Row<'billing_accounts'>> {
  await db
    .insertInto('billing_accounts')
    .values({
      org_id: orgId,
      processor,
      customer_id: null,
      payment_method_id: null,
      card_brand: null,
      card_last4: null,
      auto_reload_threshold_cents: null,
      auto_reload_amount_cents: null,
      auto_reload_paused_at: null,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('org_id').doNothing())
    .execute();
  const row = await db.selectFrom('billing_accounts').selectAll().where('org_id', '=', orgId).executeTakeFirstOrThrow();
  if (row.processor === processor) return row;
  await db
    .updateTable('billing_accounts')
    .set({
      processor,
      customer_id: null,
      payment_method_id: null,
      card_brand: null,
      card_last4: null,
      auto_reload_enabled: 0,
      updated_at: now,
    })
    .where('org_id', '=', orgId)
    .execute();
  return db.selectFrom('billing_accounts').selectAll().where('org_id', '=', orgId).executeTakeFirstOrThrow();
}

export async function findPayment(
  db: Db,
  by: { id?: string | null; ref?: string | null },
): Promise<Row<'payments'> | undefined> {
  if (by.id) {
    const row = await db.selectFrom('payments').selectAll().where('id', '=', by.id).executeTakeFirst();
    if (row) return row;
  }
  if (by.ref) return db.selectFrom('payments').selectAll().where('processor_ref', '=', by.ref).executeTakeFirst();
  return undefined;
}

export async function listPayments(db: Db, orgId: string, limit: number, offset = 0): Promise<Row<'payments'>[]> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** Marks an open payment failed/expired; never downgrades a succeeded one (out-of-order events). */
export async function failOpenPayment(
  db: Db,
  paymentId: string,
  status: 'failed' | 'expired',
  reason: string,
  now: number,
): Promise<boolean> {
  const r = await db
    .updateTable('payments')
    .set({ status, failure_reason: reason.slice(0, 200), completed_at: now })
    .where('id', '=', paymentId)
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
