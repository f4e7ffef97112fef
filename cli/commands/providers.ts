/** `svc providers [slug]`: the public provider directory, or one provider's profile. */
import { ProviderDirectorySchema, ProviderPageSchema } from '../../core/schemas/providers.schemas.js';
import { valueFlag } from '../args.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { describe, table } from '../output.js';

export default svcCommand({
  meta: { name: 'providers', description: 'Public provider directory, or one provider' },
  args: {
    slug: { type: 'positional', required: false, description: 'A provider slug' },
    q: { type: 'string', description: 'Filter by name' },
    limit: valueFlag('integer', 'Page size'),
    offset: valueFlag('integer', 'Skip this many'),
  },
  examples: ['svc providers', 'svc providers acme'],
  async run({ args }) {
    if (args.slug) {
      const r = await api('GET', `/v1/providers/${encodeURIComponent(args.slug)}`, ProviderPageSchema);
      return { data: r, human: () => describe(r) };
    }
    const r = await api('GET', '/v1/providers', ProviderDirectorySchema, {
      query: { query: args.q, limit: args.limit, offset: args.offset },
    });
    return {
      data: r,
      human: () => table(r.data, ['slug', 'display_name', 'live_listings', 'website', 'created_at']),
    };
  },
});
