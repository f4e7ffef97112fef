/** `svc provider verify <id>`: upstream smoke test. */
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { describe } from '../../output.js';
import { withSpinner } from '../../spinner.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'verify', description: 'Smoke-test the upstream' },
  args: { id: { type: 'positional', description: 'api_… id' } },
  examples: ['svc provider verify api_01jd…'],
  async run({ args }) {
    const id = str(args, 'id')!;
    const r = await withSpinner('Verifying the upstream', () =>
      api('POST', apiPath(id, '/verify'), { hint: { apiId: id } }),
    );
    return { data: r, human: () => describe(r) };
  },
});
