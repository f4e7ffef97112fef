/**
 * Everything a browser sees, mounted on the control plane at `/`: security headers, the cookie session and
 * CSRF check on every page route, then the pages. Pages call the domain services directly, never the REST API.
 */
import { assetsRoutes } from './assets/assets.routes.js';
import { cliLoginPages } from './cli-login.js';
import { csrfProtection } from './csrf.js';
import { webOnError } from './error-page.js';
import { dashboardRoutes } from './pages/dashboard.js';
import { keysPages } from './pages/keys.js';
import { billingPages } from './pages/billing.js';
import { usagePages } from './pages/usage.js';
import { termsPages } from './pages/terms.js';
import { webhooksPages } from './pages/webhooks.js';
import { catalogPages } from './pages/catalog.js';
import { listingPages } from './pages/listing.js';
import { testPaymentsPages } from './pages/test-payments.js';
import { providerPages } from './pages/provider.js';
import { marketPages } from './pages/market.js';
import { providersPages } from './pages/providers.js';
import { homeRoutes } from './pages/home.js';
import { loginRoutes } from './pages/login.js';
import { oauthAuthorizeRoutes } from './oauth-authorize.js';
import { securityHeaders } from './security-headers.js';
import type { MiddlewareHandler } from 'hono';
import { newWebRouter, type WebEnv } from './web-env.js';
import { loadWebSession } from './web-session.js';

/** Page routers, in mount order. Feature owners add theirs here (e.g. the CLI login confirm, OAuth consent). */
const PAGES = [
  homeRoutes,
  loginRoutes,
  dashboardRoutes,
  keysPages,
  billingPages,
  usagePages,
  termsPages,
  webhooksPages,
  catalogPages,
  listingPages,
  testPaymentsPages,
  providerPages,
  marketPages,
  providersPages,
  cliLoginPages,
  oauthAuthorizeRoutes,
];

/** Paths that belong to the REST API and probes, not to pages: page middleware never touches them. */
function isApiPath(path: string): boolean {
  return path.startsWith('/v1/') || path === '/healthz' || path === '/readyz';
}

/** Page middleware, skipped on API paths (a sub-app's `use('*')` would otherwise see every request). */
function pagesOnly(mw: MiddlewareHandler<WebEnv>): MiddlewareHandler<WebEnv> {
  return (c, next) => (isApiPath(c.req.path) ? next() : mw(c, next));
}

/** Mount last, after the REST routes: `app.route('/', createWebRoutes())`. */
export function createWebRoutes() {
  const web = newWebRouter();
  web.use('*', pagesOnly(securityHeaders()));
  web.route('/', assetsRoutes);
  web.use('*', pagesOnly(loadWebSession()));
  web.use('*', pagesOnly(csrfProtection()));
  for (const pages of PAGES) web.route('/', pages);
  web.onError(webOnError);
  return web;
}
