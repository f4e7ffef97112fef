/** `svc billing status|packs|setup|portal|checkout|auto-reload`. */
import { lazy, svcCommand } from '../../command.js';

export default svcCommand({
  meta: { name: 'billing', description: 'Credits, packs, checkout, card, portal, auto-reload' },
  examples: ['svc billing checkout --pack starter'],
  subCommands: {
    status: lazy(() => import('./status.js')),
    packs: lazy(() => import('./packs.js')),
    setup: lazy(() => import('./setup.js')),
    portal: lazy(() => import('./portal.js')),
    checkout: lazy(() => import('./checkout.js')),
    'auto-reload': lazy(() => import('./auto-reload.js')),
  },
});
