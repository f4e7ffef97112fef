/** `svc-admin ledger check`: verifies the books (control/ledger/README.md); exits 1 on any mismatch. */
import { defineCommand } from 'citty';
import { checkBooks } from '../../ledger/books.service.js';
import { jsonArg, withAdminContext } from '../admin-context.js';

const check = defineCommand({
  meta: {
    name: 'check',
    description:
      'Check that every balance equals its ledger entries, call charges and earnings match usage, and payouts are booked',
  },
  args: { ...jsonArg },
  run: ({ args }) =>
    withAdminContext(async ({ db }) => {
      const report = await checkBooks(db);
      if (args.json) {
        process.stdout.write(JSON.stringify({ ok: report.ok, data: report }, null, 2) + '\n');
      } else {
        const lines = [`${report.ok ? 'OK' : 'MISMATCH'}: ${report.orgs_checked} org balances checked`];
        for (const m of report.ledger_mismatches)
          lines.push(
            `org ${m.org_id}: credit_cents ${m.credit_cents} vs settled entries ${m.settled_sum}; pending_cents ${m.pending_cents} vs pending entries ${m.pending_sum}`,
          );
        for (const u of report.usage_mismatches) {
          lines.push(
            `${u.side} ${u.org_id}: calls charged ${u.usage_cents} cents in usage, ${u.booked_cents} in the ${u.side === 'consumer' ? 'ledger' : 'provider earnings'}`,
          );
        }
        for (const p of report.provider_overdrawn)
          lines.push(`provider ${p.provider_org_id}: earnings net ${p.net_cents} cents (paid out more than earned)`);
        for (const p of report.payout_mismatches)
          lines.push(`payout ${p.payout_id} (${p.status}): amount ${p.amount_cents} vs booked ${p.booked_cents}`);
        process.stdout.write(lines.join('\n') + '\n');
      }
      if (!report.ok) process.exitCode = 1;
    }),
});

export const ledgerCommand = defineCommand({
  meta: { name: 'ledger', description: 'Ledger operations' },
  subCommands: { check },
});
