/** `svc provider get <id>`: detail with pricing. */
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { describe } from '../../output.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'get', description: 'One of your APIs, with its endpoints and prices' },
  args: { id: { type: 'positional', description: 'api_… id' } },
  examples: ['svc provider get api_01jd…'],
  async run({ args }) {
    const r = await api('GET', apiPath(str(args, 'id')!));
    return { data: r, human: () => describe(r) };
  },
});
