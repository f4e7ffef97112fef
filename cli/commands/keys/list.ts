/** `svc keys list`. */
import { PageOf } from '../../../core/schemas/common.schemas.js';
import { KeyResourceSchema } from '../../../core/schemas/keys.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { table } from '../../output.js';
import { KEY_COLUMNS } from '../_shared.js';

export default svcCommand({
  meta: { name: 'list', description: 'List the org’s keys' },
  examples: ['svc keys list --json'],
  async run() {
    const r = await api('GET', '/v1/keys', PageOf(KeyResourceSchema));
    return { data: r, human: () => table(r.data, KEY_COLUMNS) };
  },
});
