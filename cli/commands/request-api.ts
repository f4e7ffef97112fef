/** `svc request-api --query`: ask for an API the catalog does not have. */
import { api } from '../client.js';
import { str, svcCommand } from '../command.js';

export default svcCommand({
  meta: { name: 'request-api', description: 'Request an API the catalog is missing' },
  args: {
    query: { type: 'string', required: true, description: 'What you need' },
    email: { type: 'string', description: 'Where to tell you when it lands' },
    notes: { type: 'string', description: 'Anything else' },
  },
  examples: ['svc request-api --query "tide tables" --email ada@example.com'],
  async run({ args }) {
    const body: Record<string, string> = { query: str(args, 'query')! };
    for (const k of ['email', 'notes']) if (str(args, k)) body[k] = str(args, k)!;
    const r = await api('POST', '/v1/catalog/requests', { body });
    return { data: r, human: 'Request recorded. Thank you.' };
  },
});
