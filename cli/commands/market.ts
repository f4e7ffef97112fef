/** `svc market overview|activity`: market aggregates and the activity feed. */
import { api } from '../client.js';
import { str, svcCommand } from '../command.js';
import { describe } from '../output.js';

const overview = svcCommand({
  meta: { name: 'overview', description: 'Market aggregates' },
  examples: ['svc market overview'],
  async run() {
    const r = await api('GET', '/v1/market/overview');
    return { data: r, human: () => describe(r) };
  },
});

const activity = svcCommand({
  meta: { name: 'activity', description: 'Recent marketplace activity' },
  args: { limit: { type: 'string', description: 'At most this many events' } },
  examples: ['svc market activity --limit 10'],
  async run({ args }) {
    const r = await api('GET', '/v1/market/activity', { query: { limit: str(args, 'limit') } });
    return { data: r, human: () => describe(r) };
  },
});

export default svcCommand({
  meta: { name: 'market', description: 'Market overview and activity feed' },
  examples: ['svc market overview'],
  subCommands: { overview: async () => overview, activity: async () => activity },
});
