/** `svc keys patch <id>`: name, caps, approval mode. */
import { KeyResourceSchema } from '../../../core/schemas/keys.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { usageError } from '../../failure.js';
import { describe } from '../../output.js';
import { budgetArgs, budgetBody } from '../_shared.js';

export default svcCommand({
  meta: { name: 'patch', description: 'Change a key’s name, caps or approval mode' },
  args: {
    id: { type: 'positional', description: 'key_… id' },
    name: { type: 'string', description: 'New name' },
    ...budgetArgs,
  },
  examples: ['svc keys patch key_01jd… --daily-cap 200 --approval-mode free_only'],
  async run({ args }) {
    const body: Record<string, unknown> = budgetBody(args);
    if (args.name) body.name = args.name;
    if (Object.keys(body).length === 0) throw usageError('nothing to change: pass --name or a cap flag');
    const r = await api('PATCH', `/v1/keys/${encodeURIComponent(args.id)}`, KeyResourceSchema, { body });
    return { data: r, human: () => describe(r) };
  },
});
