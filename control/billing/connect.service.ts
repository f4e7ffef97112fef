/**
 * Provider payouts onboarding: one connected account per provider org (created once, reused after), and a
 * fresh onboarding link each time for the human who completes identity verification. Status comes from
 * `account.updated` webhooks (Stripe) or the test onboarding page.
 */
import type { BillingCtx } from './payments.js';
import type { Db, Row } from '../../core/db/database.js';
import { assertScope, type Principal } from '../auth/principal.js';

/** @internal The org's Connect account row, for services that already know who asks. */
export async function getConnectAccount(db: Db, orgId: string): Promise<Row<'connect_accounts'> | undefined> {
  return db.selectFrom('connect_accounts').selectAll().where('org_id', '=', orgId).executeTakeFirst();
}

export async function connectOnboard(
  ctx: BillingCtx,
  caller: Principal | undefined,
  baseUrl: string,
): Promise<{ account: Row<'connect_accounts'>; url: string; created: boolean }> {
  const { orgId } = assertScope(caller, 'provider:write');
  let account = await getConnectAccount(ctx.db, orgId);
  let created = false;
  if (!account || account.processor !== ctx.payments.kind) {
    const org = await ctx.db.selectFrom('orgs').select('email').where('id', '=', orgId).executeTakeFirst();
    // Stripe side is idempotent per org (idempotency key), so two racing requests get the same account.
    const { accountId } = await ctx.payments.createConnectedAccount({ orgId, email: org?.email ?? null });
    const now = ctx.clock.now();
    await ctx.db
      .insertInto('connect_accounts')
      .values({
        org_id: orgId,
        processor: ctx.payments.kind,
        account_id: accountId,
        details_submitted: 0,
        payouts_enabled: 0,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc
          .column('org_id')
          .doUpdateSet({
            processor: ctx.payments.kind,
            account_id: accountId,
            details_submitted: 0,
            payouts_enabled: 0,
            updated_at: now,
          })
          .where('connect_accounts.processor', '!=', ctx.payments.kind),
      )
      .execute();
    account = (await getConnectAccount(ctx.db, orgId))!;
    created = account.account_id === accountId;
  }
  const link = await ctx.payments.createOnboardingLink({ accountId: account.account_id, orgId, baseUrl });
  return { account, url: link.url, created };
}

/** The caller's payout (Connect) account as every surface shows it, or null before onboarding. */
export async function payoutAccount(db: Db, caller: Principal | undefined) {
  const { orgId } = assertScope(caller, 'provider:write');
  return toConnectResource(await getConnectAccount(db, orgId));
}

/** @public A serialiser: no processor secret leaves. */
export function toConnectResource(a: Row<'connect_accounts'> | undefined) {
  if (!a) return null;
  return {
    account_id: a.account_id,
    processor: a.processor,
    details_submitted: a.details_submitted === 1,
    payouts_enabled: a.payouts_enabled === 1,
  };
}
