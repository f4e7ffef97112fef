/** `svc provider publish <id> --accept-terms [--skip-verify]`: draft to live. */
import { PublishResultSchema } from '../../../core/schemas/providers.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { usageError } from '../../failure.js';
import { withSpinner } from '../../spinner.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'publish', description: 'Go live (you must accept the marketplace terms)' },
  args: {
    id: { type: 'positional', description: 'api_… id' },
    'accept-terms': { type: 'boolean', description: 'Accept the provider terms (required)' },
    'skip-verify': { type: 'boolean', description: 'Do not smoke-test the upstream first' },
  },
  examples: ['svc provider publish api_01jd… --accept-terms'],
  async run({ args }) {
    const { id } = args;
    if (!args['accept-terms'])
      throw usageError('publishing needs --accept-terms', `svc provider publish ${id} --accept-terms`);
    const body = { accept_terms: true, ...(args['skip-verify'] ? { skip_verify: true } : {}) };
    const r = await withSpinner('Publishing', () =>
      api('POST', apiPath(id, '/publish'), PublishResultSchema, { body, hint: { apiId: id } }),
    );
    return { data: r, human: `${r.slug} is live.\nNext: svc inspect ${r.slug}` };
  },
});
