/** `svc request-api --query`: ask for an API the catalog does not have. */
import { CatalogRequestSchema } from '../../core/schemas/catalog.schemas.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';

export default svcCommand({
  meta: { name: 'request-api', description: 'Request an API the catalog is missing' },
  args: {
    query: { type: 'string', required: true, description: 'What you need' },
    email: { type: 'string', description: 'Where to tell you when it lands' },
    notes: { type: 'string', description: 'Anything else' },
  },
  examples: ['svc request-api --query "tide tables" --email ada@example.com'],
  async run({ args }) {
    const body: Record<string, string> = { query: args.query };
    if (args.email) body.email = args.email;
    if (args.notes) body.notes = args.notes;
    const r = await api('POST', '/v1/catalog/requests', CatalogRequestSchema, { body });
    return { data: r, human: 'Request recorded. Thank you.' };
  },
});
