/** `svc provider credentials <id> --secret`: the upstream secret the gateway injects. `--secret -` reads stdin. */
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { CREDENTIAL_INJECTIONS } from '../../../core/enumerations.js';
import { readStdin } from '../../read-stdin.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'credentials', description: 'Store the upstream secret (never shown again)' },
  args: {
    id: { type: 'positional', description: 'api_… id' },
    secret: { type: 'string', required: true, description: "The upstream secret; '-' reads it from stdin" },
    injection: {
      type: 'enum',
      options: [...CREDENTIAL_INJECTIONS],
      description: 'How the gateway sends it (default bearer)',
    },
    'injection-name': { type: 'string', description: 'Header or query parameter name (header/query injection)' },
  },
  examples: [
    'printf %s "$UPSTREAM_KEY" | svc provider credentials api_01jd… --secret - --injection header --injection-name X-Api-Key',
  ],
  async run({ args }) {
    const raw = str(args, 'secret')!;
    const secret = raw === '-' ? (await readStdin()).toString('utf8').trim() : raw;
    const body: Record<string, string> = { secret };
    if (str(args, 'injection')) body.injection = str(args, 'injection')!;
    if (str(args, 'injection-name')) body.injection_name = str(args, 'injection-name')!;
    const id = str(args, 'id')!;
    const r = await api('PUT', apiPath(id, '/credentials'), { body, hint: { apiId: id } });
    return { data: r, human: `Secret stored. Next: svc provider pricing ${id} --endpoint-id <ep_…> --price-cents <n>` };
  },
});
