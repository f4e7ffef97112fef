/**
 * Security headers on every web response. The CSP allows no inline script at all (pages work without JS;
 * the only script is our own static file) and no framing. `form-action` is 'self' unless a page that must
 * redirect a form post elsewhere (CLI loopback callback, OAuth client redirect) opts in per response.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { WebEnv } from './web-env.js';

export function securityHeaders(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    await next();
    const formAction = ["'self'", ...(c.get('cspFormAction') ?? [])].join(' ');
    c.header(
      'content-security-policy',
      [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        `form-action ${formAction}`,
        "frame-ancestors 'none'",
      ].join('; '),
    );
    c.header('x-frame-options', 'DENY');
    c.header('x-content-type-options', 'nosniff');
    // same-origin rather than no-referrer: no-referrer would also make Chrome send `Origin: null` on our own posts.
    c.header('referrer-policy', 'same-origin');
    c.header('cross-origin-opener-policy', 'same-origin');
    c.header('permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=()');
    if (c.get('ctx').config.isProduction) c.header('strict-transport-security', 'max-age=31536000');
    // Pages can hold per-person data and one-time secrets: never cache them in shared caches.
    if (!c.res.headers.has('cache-control')) c.header('cache-control', 'no-store');
  };
}

/**
 * Lets this response's forms (and the redirect that follows their post) go to `origin`, e.g. the CLI's
 * `http://127.0.0.1:PORT` callback or an OAuth client's redirect URI origin. Only for a vetted origin.
 */
export function allowFormRedirectTo(c: Context<WebEnv>, origin: string): void {
  c.set('cspFormAction', [...(c.get('cspFormAction') ?? []), new URL(origin).origin]);
}
