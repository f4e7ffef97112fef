/** `svc provider …`: the provider lifecycle (create → credentials → pricing → verify → publish), documents, payouts. */
import { lazy, svcCommand } from '../../command.js';

export default svcCommand({
  meta: { name: 'provider', description: 'Publish and manage your APIs' },
  examples: ['svc provider create https://example.com/openapi.json'],
  subCommands: {
    list: lazy(() => import('./list.js')),
    get: lazy(() => import('./get.js')),
    create: lazy(() => import('./create.js')),
    patch: lazy(() => import('./patch.js')),
    credentials: lazy(() => import('./credentials.js')),
    pricing: lazy(() => import('./pricing.js')),
    'pricing-cancel': lazy(() => import('./pricing-cancel.js')),
    verify: lazy(() => import('./verify.js')),
    publish: lazy(() => import('./publish.js')),
    unpublish: lazy(() => import('./unpublish.js')),
    connect: lazy(() => import('./connect.js')),
    analytics: lazy(() => import('./analytics.js')),
    documents: lazy(() => import('./documents.js')),
  },
});
