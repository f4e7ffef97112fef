/**
 * `svc provider create <source>` (alias `svc publish <source>`): import an API as a draft from an OpenAPI URL,
 * a marketplace export URL (`--rapidapi`), or a local file (JSON or YAML, sent as `body`).
 */
import { readFileSync } from 'node:fs';
import { ImportedApiSchema } from '../../../core/schemas/providers.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { usageError } from '../../failure.js';
import { plural } from '../../output.js';
import { withSpinner } from '../../spinner.js';

export default svcCommand({
  meta: { name: 'create', description: 'Import an API as a draft (OpenAPI URL, --rapidapi URL, or a local file)' },
  args: {
    source: { type: 'positional', description: 'URL of the OpenAPI document, or a local file path' },
    rapidapi: { type: 'boolean', description: 'The URL is a marketplace OpenAPI export' },
    name: { type: 'string', description: 'Listing name (default: from the document)' },
    slug: { type: 'string', description: 'Listing slug' },
    category: { type: 'string', description: 'Category' },
    'base-url': { type: 'string', description: 'Upstream base URL' },
  },
  examples: [
    'svc provider create https://api.example.com/openapi.json --category weather',
    'svc publish ./openapi.yaml',
  ],
  async run({ args }) {
    const { source } = args;
    const isUrl = /^https?:\/\//.test(source);
    if (args.rapidapi && !isUrl) throw usageError('--rapidapi takes a URL');
    let body: Record<string, unknown>;
    if (isUrl) body = args.rapidapi ? { rapidapi_url: source } : { openapi_url: source };
    else {
      try {
        body = { body: readFileSync(source, 'utf8') };
      } catch {
        throw usageError(`cannot read ${source}: pass an http(s) URL or a readable file`);
      }
    }
    for (const [flag, field] of [
      ['name', 'name'],
      ['slug', 'slug'],
      ['category', 'category'],
      ['base-url', 'base_url'],
    ] as const)
      if (args[flag]) body[field] = args[flag];
    const r = await withSpinner('Importing', () => api('POST', '/v1/provider/apis', ImportedApiSchema, { body }));
    // The answer carries the first page of endpoints; endpoint_count is all of them.
    return {
      data: r,
      human: [
        `Draft ${r.api_id} (${r.slug}) created with ${plural(r.endpoint_count, 'endpoint')}.`,
        ...r.warnings.map((w) => `warning: ${w}`),
        `Next: svc provider credentials ${r.api_id} --secret -`,
      ].join('\n'),
    };
  },
});
