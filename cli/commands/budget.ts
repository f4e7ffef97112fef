/** `svc budget set`: spend caps of a key (default: the key this CLI is configured with). */
import { MeSchema } from '../../core/schemas/identity.schemas.js';
import { KeyResourceSchema } from '../../core/schemas/keys.schemas.js';
import { api, config } from '../client.js';
import { svcCommand } from '../command.js';
import { usageError } from '../failure.js';
import { describe } from '../output.js';
import { budgetArgs, budgetBody } from './_shared.js';

const set = svcCommand({
  meta: { name: 'set', description: 'Set spend caps on a key' },
  args: { key: { type: 'string', description: 'key_… id (default: the configured key)' }, ...budgetArgs },
  examples: ['svc budget set --budget 1000 --per-call-max 5 --daily-cap 200'],
  async run({ args }) {
    const body = budgetBody(args);
    if (Object.keys(body).length === 0)
      throw usageError('nothing to set: pass --budget, --per-call-max, --daily-cap or --approval-mode');
    let keyId = args.key;
    if (!keyId) {
      const token = config().apiKey;
      if (!token) throw usageError('no key configured: pass --key <key_id>', 'svc keys list');
      const me = await api('GET', '/v1/me', MeSchema, { auth: 'key' });
      keyId = me.credential.key_id ?? undefined;
      if (!keyId) throw usageError('pass --key <key_id>', 'svc keys list');
    }
    const r = await api('PATCH', `/v1/keys/${encodeURIComponent(keyId)}`, KeyResourceSchema, { body });
    return { data: r, human: () => describe(r) };
  },
});

export default svcCommand({
  meta: { name: 'budget', description: 'Spend caps (budget set)' },
  examples: ['svc budget set --daily-cap 200'],
  subCommands: { set: async () => set },
});
