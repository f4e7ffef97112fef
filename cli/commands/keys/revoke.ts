/** `svc keys revoke <id>`. */
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';

export default svcCommand({
  meta: { name: 'revoke', description: 'Revoke a key (it stops working at once)' },
  args: { id: { type: 'positional', description: 'key_… id' } },
  examples: ['svc keys revoke key_01jd…'],
  async run({ args }) {
    const id = str(args, 'id')!;
    const r = await api('DELETE', `/v1/keys/${encodeURIComponent(id)}`);
    return { data: r, human: `Key ${id} revoked.` };
  },
});
