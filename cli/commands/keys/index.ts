/** `svc keys list|create|revoke|patch`. */
import { lazy, svcCommand } from '../../command.js';

export default svcCommand({
  meta: { name: 'keys', description: 'Manage API keys (list, create, revoke, patch)' },
  examples: ['svc keys list'],
  subCommands: {
    list: lazy(() => import('./list.js')),
    create: lazy(() => import('./create.js')),
    revoke: lazy(() => import('./revoke.js')),
    patch: lazy(() => import('./patch.js')),
  },
});
