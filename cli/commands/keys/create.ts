/** `svc keys create --name`: a new key (shown once) with scopes and caps. It is printed, not stored. */
import { CreatedKeySchema } from '../../../core/schemas/keys.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { ALL_SCOPES } from '../../../core/scopes.js';
import { usageError } from '../../failure.js';
import { budgetArgs, budgetBody } from '../_shared.js';

export default svcCommand({
  meta: { name: 'create', description: 'Create a key (printed once; per-agent keys with caps are safest)' },
  args: {
    name: { type: 'string', required: true, description: 'What the key is for' },
    scopes: { type: 'string', description: `Comma-separated: ${ALL_SCOPES.join(',')}` },
    ...budgetArgs,
  },
  examples: ['svc keys create --name ci-agent --scopes catalog:read,proxy:call --budget 500 --daily-cap 100'],
  async run({ args }) {
    const body: Record<string, unknown> = { name: args.name, ...budgetBody(args) };
    const { scopes } = args;
    if (scopes !== undefined) {
      const list = scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = list.filter((s) => !(ALL_SCOPES as readonly string[]).includes(s));
      if (bad.length) throw usageError(`unknown scope ${bad.join(', ')}; choose from ${ALL_SCOPES.join(', ')}`);
      body.scopes = list;
    }
    const r = await api('POST', '/v1/keys', CreatedKeySchema, { body });
    return { data: r, human: `${r.api_key}\nKey ${r.key.id} created. It is shown once: store it now.` };
  },
});
