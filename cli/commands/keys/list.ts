/** `svc keys list`. */
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { table } from '../../output.js';
import { KEY_COLUMNS } from '../_shared.js';

export default svcCommand({
  meta: { name: 'list', description: 'List the org’s keys' },
  examples: ['svc keys list --json'],
  async run() {
    const r = await api<{ data: Record<string, unknown>[] }>('GET', '/v1/keys');
    return { data: r, human: () => table(r.data, KEY_COLUMNS) };
  },
});
