/** `svc provider analytics`: gross volume, fees, earnings and payouts. */
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { describe } from '../../output.js';

export default svcCommand({
  meta: { name: 'analytics', description: 'Your volume, earnings and payouts' },
  args: {
    from: { type: 'string', description: 'Start (ISO date)' },
    to: { type: 'string', description: 'End (ISO date)' },
  },
  examples: ['svc provider analytics --json'],
  async run({ args }) {
    const r = await api('GET', '/v1/provider/analytics', { query: { from: str(args, 'from'), to: str(args, 'to') } });
    return { data: r, human: () => describe(r) };
  },
});
