/** `svc webhooks list|create|delete|enable|test|deliveries|replay` (docs/webhooks.md). */
import { lazy, svcCommand } from '../../command.js';

export default svcCommand({
  meta: { name: 'webhooks', description: 'Signed event webhooks: payments, payouts, low balance, caps, prices, terms' },
  examples: ['svc webhooks create --url https://example.com/svc --events balance.low,payment.succeeded'],
  subCommands: {
    list: lazy(() => import('./list.js')),
    create: lazy(() => import('./create.js')),
    delete: lazy(() => import('./delete.js')),
    enable: lazy(() => import('./enable.js')),
    test: lazy(() => import('./test.js')),
    deliveries: lazy(() => import('./deliveries.js')),
    replay: lazy(() => import('./replay.js')),
  },
});
