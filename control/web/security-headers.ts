/**
 * Security headers on every web response. The CSP allows no inline script at all (pages work without JS;
 * the only script is our own static file) and no framing. `form-action` is 'self' unless a page that must
 * redirect a form post elsewhere (CLI loopback callback, OAuth client redirect) opts in per response.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { WebEnv } from './web-env.js';
import { setAnswerHeader } from '../lib/http.js';

export function securityHeaders(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    await next();
    const formAction = ["'self'", ...(c.get('cspFormAction') ?? [])].join(' ');
    setAnswerHeader(
      c,
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
    setAnswerHeader(c, 'x-frame-options', 'DENY');
    setAnswerHeader(c, 'x-content-type-options', 'nosniff');
    // same-origin rather than no-referrer: no-referrer would also make Chrome send `Origin: null` on our own posts.
    setAnswerHeader(c, 'referrer-policy', 'same-origin');
    setAnswerHeader(c, 'cross-origin-opener-policy', 'same-origin');
    setAnswerHeader(c, 'permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=()');
    if (c.get('ctx').config.isProduction) setAnswerHeader(c, 'strict-transport-security', 'max-age=31536000');
    // Pages can hold per-person data and one-time secrets: never cache them in shared caches.
    if (!c.res.headers.has('cache-control')) setAnswerHeader(c, 'cache-control', 'no-store');
  };
}

/**
 * Lets this response's forms (and the redirect that follows their post) go to `origin`, e.g. the CLI's
 * `http://127.0.0.1:PORT` callback or an OAuth client's redirect URI origin. Only for a vetted origin.
 */
export function allowFormRedirectTo(c: Context<WebEnv>, origin: string): void {
  c.set('cspFormAction', [...(c.get('cspFormAction') ?? []), new URL(origin).origin]);
}
