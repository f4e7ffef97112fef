/**
 * `svc-admin payouts run [--period YYYY-MM]`: transfers each provider's unpaid net earnings above
 * SVC_PAYOUT_MIN_CENTS to its connected account, once per period (default: the previous UTC month).
 */
import { defineCommand } from 'citty';
import { isSvcError } from '../../../core/errors.js';
import { paymentsMode } from '../../billing/payments.js';
import { periodEnd, previousPeriod, runPayouts } from '../../billing/payouts.service.js';
import { fail, jsonArg, withAdminContext } from '../admin-context.js';

const run = defineCommand({
  meta: { name: 'run', description: 'Run the payout for a period (exactly once per provider and period)' },
  args: { ...jsonArg, period: { type: 'string', description: 'UTC month YYYY-MM (default: previous month)' } },
  run: ({ args }) =>
    withAdminContext(async ({ config, db, clock, payments }) => {
      const period = args.period ?? previousPeriod(clock.now());
      try {
        periodEnd(period);
      } catch (e) {
        fail(isSvcError(e) ? e.detail : String(e));
      }
      const results = await runPayouts({ config, db, clock, payments }, period);
      const failed = results.some((r) => r.outcome === 'failed');
      if (args.json) {
        process.stdout.write(
          JSON.stringify(
            { ok: !failed, data: { period, payments_mode: paymentsMode({ config, payments }), results } },
            null,
            2,
          ) + '\n',
        );
      } else {
        const lines = [`payouts for ${period} (${payments.kind} mode):`];
        for (const r of results)
          lines.push(
            `  ${r.provider_org_id}: ${r.outcome} ${r.amount_cents} cents${r.transfer_id ? ` (${r.transfer_id})` : ''}${r.reason ? `: ${r.reason}` : ''}`,
          );
        process.stdout.write(lines.join('\n') + '\n');
      }
      if (failed) process.exitCode = 1;
    }),
});

export const payoutsCommand = defineCommand({
  meta: { name: 'payouts', description: 'Provider payouts' },
  subCommands: { run },
});
