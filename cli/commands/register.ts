/** `svc register`: anonymous agent registration (0 credits); the new key is stored in ~/.svc/config.json. */
import { RegistrationSchema } from '../../core/schemas/identity.schemas.js';
import { api, config } from '../client.js';
import { svcCommand } from '../command.js';
import { saveConfig } from '../config-store.js';
import { CliFailure } from '../failure.js';
import { dim, interactive } from '../output.js';

export default svcCommand({
  meta: { name: 'register', description: 'Create an anonymous org and API key (0 credits) and store the key' },
  args: { force: { type: 'boolean', description: 'Replace a key that is already stored' } },
  examples: ['svc register'],
  async run({ args }) {
    if (config().apiKey && !args.force && !process.env.SVC_API_KEY)
      throw new CliFailure(
        'api',
        'key_already_stored',
        `A key is already stored in ${config().file}; registering again would replace it`,
        null,
        'svc register --force',
      );
    const reg = await api('POST', '/v1/register', RegistrationSchema, { auth: 'none' });
    saveConfig({ apiKey: reg.api_key });
    return {
      data: reg,
      human: [
        `Registered org ${reg.org_id} with key ${reg.key_id} (0 credits).`,
        `Key stored in ${config().file} ${dim('(the server shows it only once: keep it secret)')}`,
        ...(interactive() ? ['See it with: svc token   (for scripts: export SVC_API_KEY="$(svc token)")'] : []),
        'Connect your agent: svc connect --client claude-code   (or cursor, codex, gemini, …)',
        'Free APIs work now: svc search <query>',
      ].join('\n'),
    };
  },
});
