/** `svc provider unpublish <id>`: live to draft. */
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'unpublish', description: 'Take a live API back to draft' },
  args: { id: { type: 'positional', description: 'api_… id' } },
  examples: ['svc provider unpublish api_01jd…'],
  async run({ args }) {
    const r = await api('POST', apiPath(str(args, 'id')!, '/unpublish'));
    return { data: r, human: 'Back to draft.' };
  },
});
