/** `svc provider patch <id>`: listing metadata. */
import { ProviderApiDetailSchema } from '../../../core/schemas/providers.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { usageError } from '../../failure.js';
import { apiDetailText } from './_view.js';
import { apiPath } from './_api-path.js';

const FIELDS = [
  ['name', 'name'],
  ['slug', 'slug'],
  ['summary', 'summary'],
  ['description', 'description'],
  ['category', 'category'],
  ['base-url', 'base_url'],
  ['docs-url', 'docs_url'],
  ['logo-url', 'logo_url'],
  ['health-path', 'health_path'],
] as const;

export default svcCommand({
  meta: { name: 'patch', description: 'Change listing metadata' },
  args: {
    id: { type: 'positional', description: 'api_… id' },
    name: { type: 'string', description: 'Name' },
    slug: { type: 'string', description: 'Slug' },
    summary: { type: 'string', description: 'One line' },
    description: { type: 'string', description: 'Longer text' },
    category: { type: 'string', description: 'Category' },
    tags: { type: 'string', description: 'Comma-separated tags' },
    'base-url': { type: 'string', description: 'Upstream base URL' },
    'docs-url': { type: 'string', description: 'Documentation URL' },
    'logo-url': { type: 'string', description: 'Logo URL' },
    'health-path': { type: 'string', description: 'GET path that verify calls' },
  },
  examples: ['svc provider patch api_01jd… --summary "Weather by city" --category weather'],
  async run({ args }) {
    const body: Record<string, unknown> = {};
    for (const [flag, field] of FIELDS) if (args[flag] !== undefined) body[field] = args[flag];
    if (args.tags !== undefined)
      body.tags = args.tags
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
    if (Object.keys(body).length === 0) throw usageError('nothing to change: pass at least one field flag');
    const r = await api('PATCH', apiPath(args.id), ProviderApiDetailSchema, { body, hint: { apiId: args.id } });
    return { data: r, human: () => apiDetailText(r) };
  },
});
