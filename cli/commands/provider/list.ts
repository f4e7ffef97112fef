/** `svc provider list`: your draft and live APIs. */
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { table } from '../../output.js';

export default svcCommand({
  meta: { name: 'list', description: 'Your draft and live APIs' },
  examples: ['svc provider list'],
  async run() {
    const r = await api<{ data: Record<string, unknown>[] }>('GET', '/v1/provider/apis');
    return { data: r, human: () => table(r.data ?? [], ['api_id', 'slug', 'name', 'status', 'updated_at']) };
  },
});
