/** `svc provider credentials <id> --secret`: the upstream secret the gateway injects. `--secret -` reads stdin. */
import { CredentialsResultSchema } from '../../../core/schemas/providers.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
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
    const { id } = args;
    const secret = args.secret === '-' ? (await readStdin()).toString('utf8').trim() : args.secret;
    const body: Record<string, string> = { secret };
    if (args.injection) body.injection = args.injection;
    if (args['injection-name']) body.injection_name = args['injection-name'];
    const r = await api('PUT', apiPath(id, '/credentials'), CredentialsResultSchema, { body, hint: { apiId: id } });
    return {
      data: r,
      human: `Secret stored (fingerprint ${r.credentials.fingerprint ?? '-'}).\nNext: svc provider get ${id}`,
    };
  },
});
