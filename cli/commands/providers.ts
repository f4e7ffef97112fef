/** `svc providers [slug]`: the public provider directory, or one provider's profile. */
import { api } from '../client.js';
import { str, svcCommand } from '../command.js';
import { describe } from '../output.js';

export default svcCommand({
  meta: { name: 'providers', description: 'Public provider directory, or one provider' },
  args: {
    slug: { type: 'positional', required: false, description: 'A provider slug' },
    q: { type: 'string', description: 'Filter by name' },
    limit: { type: 'string', description: 'Page size' },
    offset: { type: 'string', description: 'Skip this many' },
  },
  examples: ['svc providers', 'svc providers acme'],
  async run({ args }) {
    const slug = str(args, 'slug');
    const r = slug
      ? await api('GET', `/v1/providers/${encodeURIComponent(slug)}`)
      : await api('GET', '/v1/providers', {
          query: { query: str(args, 'q'), limit: str(args, 'limit'), offset: str(args, 'offset') },
        });
    return { data: r, human: () => describe(r) };
  },
});
