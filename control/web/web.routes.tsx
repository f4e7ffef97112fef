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
import { providerApiPages } from './pages/provider-api.js';
import { providerProfilePages } from './pages/provider-profile.js';
import { marketPages } from './pages/market.js';
import { providersPages } from './pages/providers.js';
import { homeRoutes } from './pages/home.js';
import { loginRoutes } from './pages/login.js';
import { oauthAuthorizeRoutes } from './oauth-authorize.js';
import { securityHeaders } from './security-headers.js';
import type { Context, MiddlewareHandler } from 'hono';
import { renderPage } from './layout.js';
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
  providerApiPages,
  providerProfilePages,
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
  // `/apis/<slug>` is a listing; `/apis` alone (or `/apis/`) means the list of them.
  web.get('/apis', (c) => c.redirect('/catalog', 308));
  web.get('*', notFoundPage);
  web.onError(webOnError);
  return web;
}

/** A browser asks for HTML first; curl, SDKs and fetch() without an Accept header get problem+json. */
function wantsHtml(c: Context<WebEnv>): boolean {
  return (c.req.header('accept') ?? '').includes('text/html');
}

/**
 * GET of a path no page or route answers: `/catalog/` redirects to `/catalog` (308, query kept; never to a
 * `//host` path), a browser gets a 404 page in the layout, anything else the REST 404 (problem+json).
 */
async function notFoundPage(c: Context<WebEnv>): Promise<Response> {
  const path = c.req.path;
  if (isApiPath(path)) return c.notFound();
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed !== path && trimmed.startsWith('/') && !/^\/[\/\\]/.test(trimmed)) {
    const url = new URL(c.req.url);
    return c.redirect(trimmed + url.search, 308);
  }
  if (!wantsHtml(c)) return c.notFound();
  return renderPage(
    c,
    { title: 'Page not found', status: 404 },
    <>
      <p>There is no page at this address. It may have moved, or the link may be mistyped.</p>
      <form class="row" method="get" action="/catalog" role="search">
        <label class="visually-hidden" for="nf-q">
          Search APIs
        </label>
        <input id="nf-q" name="q" type="search" placeholder="Search APIs" />
        <button type="submit">Search</button>
      </form>
      <ul>
        <li>
          <a href="/">Home</a>
        </li>
        <li>
          <a href="/catalog">Browse the catalog</a>
        </li>
        <li>
          <a href="/dashboard">Your dashboard</a>
        </li>
      </ul>
      <p class="hint">
        Error <code>not_found</code> · request <code>{c.get('requestId')}</code>
      </p>
    </>,
  );
}
