/** `svc keys revoke <id>`. */
import { KeyResourceSchema } from '../../../core/schemas/keys.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';

export default svcCommand({
  meta: { name: 'revoke', description: 'Revoke a key (it stops working at once)' },
  args: { id: { type: 'positional', description: 'key_… id' } },
  examples: ['svc keys revoke key_01jd…'],
  async run({ args }) {
    const { id } = args;
    const r = await api('DELETE', `/v1/keys/${encodeURIComponent(id)}`, KeyResourceSchema);
    return { data: r, human: `Key ${id} revoked.` };
  },
});
