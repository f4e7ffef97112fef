/** `svc provider verify <id>`: upstream smoke test. */
import { VerifyResultSchema } from '../../../core/schemas/providers.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { table } from '../../output.js';
import { withSpinner } from '../../spinner.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'verify', description: 'Smoke-test the upstream' },
  args: { id: { type: 'positional', description: 'api_… id' } },
  examples: ['svc provider verify api_01jd…'],
  async run({ args }) {
    const { id } = args;
    const r = await withSpinner('Verifying the upstream', () =>
      api('POST', apiPath(id, '/verify'), VerifyResultSchema, { hint: { apiId: id } }),
    );
    return {
      data: r,
      human: async () =>
        `${r.ok ? 'Verified' : 'Not verified'}: ${r.detail}\n${await table(r.checks, ['method', 'path', 'status', 'latency_ms', 'ok', 'error'])}`,
    };
  },
});
