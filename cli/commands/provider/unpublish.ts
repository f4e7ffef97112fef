/** `svc provider unpublish <id>`: live to draft. */
import { ProviderApiDetailSchema } from '../../../core/schemas/providers.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'unpublish', description: 'Take a live API back to draft' },
  args: { id: { type: 'positional', description: 'api_… id' } },
  examples: ['svc provider unpublish api_01jd…'],
  async run({ args }) {
    const r = await api('POST', apiPath(args.id, '/unpublish'), ProviderApiDetailSchema);
    return { data: r, human: `${r.slug} is back to draft.` };
  },
});
