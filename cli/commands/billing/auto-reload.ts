/** `svc billing auto-reload --enable|--disable [--threshold] [--amount]` (cents). */
import { BalanceSchema } from '../../../core/schemas/billing.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { usageError } from '../../failure.js';
import { valueFlag } from '../../args.js';
import { describe } from '../../output.js';

export default svcCommand({
  meta: { name: 'auto-reload', description: 'Reload credits from the saved card when they run low' },
  args: {
    enable: { type: 'boolean', description: 'Turn auto-reload on' },
    disable: { type: 'boolean', description: 'Turn it off' },
    threshold: valueFlag('cents', 'Reload when credits fall below this many cents'),
    amount: valueFlag('cents', 'Cents to add per reload'),
  },
  examples: ['svc billing auto-reload --enable --threshold 200 --amount 1000'],
  async run({ args }) {
    if (args.enable === args.disable) throw usageError('pass exactly one of --enable, --disable');
    const body: Record<string, unknown> = { enabled: args.enable };
    if (args.threshold !== undefined) body.threshold_cents = Number(args.threshold);
    if (args.amount !== undefined) body.amount_cents = Number(args.amount);
    const r = await api('POST', '/v1/billing/auto-reload', BalanceSchema.shape.auto_reload, { body });
    return { data: r, human: () => describe(r) };
  },
});
