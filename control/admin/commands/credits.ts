/** `admin credits grant|deduct <org_id> <cents> --reason`: an `adjustment` ledger entry, never a bare balance edit. */
import { defineCommand } from 'citty';
import { postEntry } from '../../ledger/ledger.service.js';
import { newId } from '../../../core/ids.js';
import { isSvcError } from '../../../core/errors.js';
import { fail, jsonArg, print, withAdminContext } from '../admin-context.js';

function adjust(sign: 1 | -1) {
  return defineCommand({
    meta: {
      name: sign > 0 ? 'grant' : 'deduct',
      description: sign > 0 ? 'Add credits to an org' : 'Remove credits from an org',
    },
    args: {
      ...jsonArg,
      org: { type: 'positional', description: 'org_id', required: true },
      cents: { type: 'positional', description: 'Amount in cents (positive integer)', required: true },
      reason: { type: 'string', description: 'Why (kept on the ledger entry)', required: true },
    },
    run: ({ args }) =>
      withAdminContext(async ({ db, clock }) => {
        const now = clock.now();
        const cents = Number(args.cents);
        if (!Number.isSafeInteger(cents) || cents <= 0) fail('cents must be a positive integer');
        if (!args.reason.trim()) fail('--reason is required');
        const org = await db.selectFrom('orgs').select('id').where('id', '=', args.org).executeTakeFirst();
        if (!org) fail(`no org ${args.org}`);
        try {
          const r = await db.transaction().execute((trx) =>
            postEntry(
              trx,
              {
                orgId: args.org,
                kind: 'adjustment',
                amountCents: sign * cents,
                reason: `operator: ${args.reason}`,
                refType: 'admin',
                idempotencyKey: `admin:${newId('txn', now)}`,
              },
              now,
            ),
          );
          const bal = await db
            .selectFrom('balances')
            .select('credit_cents')
            .where('org_id', '=', args.org)
            .executeTakeFirstOrThrow();
          print(
            args.json,
            { entry_id: r.entry.id, amount_cents: r.entry.amount_cents, credit_cents: bal.credit_cents },
            [
              `${r.entry.id}: ${sign > 0 ? '+' : ''}${r.entry.amount_cents} cents; balance now ${bal.credit_cents} cents`,
            ],
          );
        } catch (e) {
          if (isSvcError(e)) fail(`${e.code}: ${e.detail}`);
          throw e;
        }
      }),
  });
}

export const creditsCommand = defineCommand({
  meta: { name: 'credits', description: 'Grant or deduct credits' },
  subCommands: { grant: adjust(1), deduct: adjust(-1) },
});
