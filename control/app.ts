/** The control-plane Hono app: request ids, context, auth, every domain's routes, OpenAPI document, error edge. */
import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import type { AppContext } from './context.js';
import { SvcError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { onError, problemResponse, setAnswerHeader, type AppEnv } from './lib/http.js';
import { authenticate, refuseMalformedAuthorization } from './auth/rest-auth.js';
import { identityRoutes } from './orgs/identity.routes.js';
import { keysRoutes } from './keys/keys.routes.js';
import { catalogRoutes } from './catalog/catalog.routes.js';
import { providersRoutes } from './providers/providers.routes.js';
import { termsRoutes } from './terms/terms.routes.js';
import { billingRoutes } from './billing/billing.routes.js';
import { marketRoutes } from './market/market.routes.js';
import { usageRoutes } from './usage/usage.routes.js';
import { webhooksRoutes } from './webhooks/webhooks.routes.js';
import { oauthRoutes } from './oauth/oauth.routes.js';
import { cliLoginRoutes } from './sessions/cli-login.routes.js';
import { createWebRoutes } from './web/web.routes.js';
import { httpMetrics } from './lib/http-metrics.js';

export const MAX_BODY_BYTES = 5 * 1024 * 1024;

/** The domain operations under /v1. */
const DOMAIN_ROUTES = [
  identityRoutes,
  keysRoutes,
  catalogRoutes,
  providersRoutes,
  termsRoutes,
  billingRoutes,
  marketRoutes,
  usageRoutes,
  webhooksRoutes,
] as const;

export function createApp(ctx: AppContext): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  app.use('*', httpMetrics(ctx.log));
  app.use('*', async (c, next) => {
    c.set('ctx', ctx);
    c.set('requestId', newId('req'));
    await next();
    setAnswerHeader(c, 'x-svc-request-id', c.get('requestId'));
  });
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    // The rest of the upload is not read: say so, so the client does not reuse a socket that is about to close.
    onError: (c) => {
      const res = problemResponse(c, new SvcError('payload_too_large', `Body over ${MAX_BODY_BYTES} bytes`));
      res.headers.set('connection', 'close');
      return res;
    },
  });
  // A GET or HEAD carries no body we read; asking for one makes @hono/node-server build a full Web Request per call,
  // a tenth of a read's CPU.
  app.use('*', (c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next)));
  app.use('/v1/*', refuseMalformedAuthorization(), authenticate());

  app.get('/healthz', (c) => c.json({ ok: true, process: 'control' }));
  app.get('/readyz', async (c) => {
    await ctx.db.selectFrom('orgs').select('id').limit(1).execute();
    return c.json({ ok: true });
  });

  for (const routes of [...DOMAIN_ROUTES, oauthRoutes, cliLoginRoutes]) app.route('/', routes);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (svc_live_…) or a session token (sess_…)',
  });
  app.doc31('/v1/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'svc control plane',
      version: '1.0.0',
      description:
        'REST control plane of the svc API marketplace. Errors are RFC 9457 problem+json with `code` and `request_id`.',
    },
    servers: [{ url: ctx.config.urls.control }],
  });

  // Pages last: their middleware must never run before (or instead of) a REST route.
  app.route('/', createWebRoutes());

  app.notFound((c) => problemResponse(c, new SvcError('not_found', `No route ${c.req.method} ${c.req.path}`)));
  app.onError(onError);
  return app;
}
