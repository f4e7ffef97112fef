/** `svc billing auto-reload --enable|--disable [--threshold] [--amount]` (cents). */
import { centsFlag } from '../../args.js';
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { usageError } from '../../failure.js';
import { describe } from '../../output.js';

export default svcCommand({
  meta: { name: 'auto-reload', description: 'Reload credits from the saved card when they run low' },
  args: {
    enable: { type: 'boolean', description: 'Turn auto-reload on' },
    disable: { type: 'boolean', description: 'Turn it off' },
    threshold: { type: 'string', description: 'Reload when credits fall below this many cents' },
    amount: { type: 'string', description: 'Cents to add per reload' },
  },
  examples: ['svc billing auto-reload --enable --threshold 200 --amount 1000'],
  async run({ args }) {
    if (Boolean(args.enable) === Boolean(args.disable)) throw usageError('pass exactly one of --enable, --disable');
    const body: Record<string, unknown> = { enabled: Boolean(args.enable) };
    const threshold = centsFlag('threshold', str(args, 'threshold'));
    const amount = centsFlag('amount', str(args, 'amount'));
    if (typeof threshold === 'number') body.threshold = threshold;
    if (typeof amount === 'number') body.amount = amount;
    const r = await api('POST', '/v1/billing/auto-reload', { body });
    return { data: r, human: () => describe(r) };
  },
});
