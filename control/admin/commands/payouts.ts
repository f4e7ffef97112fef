/**
 * `svc-admin payouts run [--period YYYY-MM]`: transfers each provider's unpaid net earnings above
 * SVC_PAYOUT_MIN_CENTS to its connected account, once per period (default: the previous UTC month).
 */
import { defineCommand } from 'citty';
import { loadConfigOrExit } from '../../config.js';
import { openDatabase } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { loadSecretKey } from '../../context.js';
import { offsetClock } from '../../lib/clock.js';
import { createPaymentsBackend } from '../../billing/payments.js';
import { previousPeriod, runPayouts } from '../../billing/payouts.service.js';

const run = defineCommand({
  meta: { name: 'run', description: 'Run the payout for a period (exactly once per provider and period)' },
  args: { period: { type: 'string', description: 'UTC month YYYY-MM (default: previous month)' } },
  async run({ args }) {
    const config = loadConfigOrExit();
    const handles = openDatabase(config.dbFile);
    try {
      await migrateToLatest(handles.db);
      const clock = offsetClock(config.env === 'development' ? config.clockOffsetFile : undefined);
      const payments = createPaymentsBackend(config, loadSecretKey(config));
      const period = args.period ?? previousPeriod(clock.now());
      const results = await runPayouts({ config, db: handles.db, clock, payments }, period);
      process.stdout.write(JSON.stringify({ ok: true, period, payments_mode: payments.kind, results }, null, 2) + '\n');
      if (results.some((r) => r.outcome === 'failed')) process.exitCode = 1;
    } finally {
      await handles.close();
    }
  },
});

export const payoutsCommand = defineCommand({
  meta: { name: 'payouts', description: 'Provider payouts' },
  subCommands: { run },
});
