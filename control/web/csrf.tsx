/**
 * CSRF protection for every web form: a random secret in an HttpOnly cookie, and in each form a hidden
 * `csrf_token` that is the secret's HMAC under the server key. A cross-site page can neither read the cookie
 * nor compute the token, and it cannot plant the cookie (`__Host-` in production). Posts that come from a
 * foreign Origin are refused before the token is even looked at.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { SvcError } from '../../core/errors.js';
import { safeEqualHex } from '../../core/crypto.js';
import { readCookie, writeCookie } from './cookies.js';
import type { WebEnv } from './web-env.js';

export const CSRF_FIELD = 'csrf_token';
const SECRET_FORMAT = /^[0-9a-f]{64}$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function tokenFor(c: Context<WebEnv>, secret: string): string {
  return createHmac('sha256', c.get('ctx').secretKey).update(`csrf:${secret}`).digest('hex');
}

/** The token for this browser, creating its CSRF cookie on first use. */
export function csrfToken(c: Context<WebEnv>): string {
  let secret = c.get('csrfSecret') ?? readCookie(c, 'csrf');
  if (!secret || !SECRET_FORMAT.test(secret)) {
    secret = randomBytes(32).toString('hex');
    writeCookie(c, 'csrf', secret);
  }
  // Every form on the page (and a cookie written just now) must agree on one secret.
  c.set('csrfSecret', secret);
  return tokenFor(c, secret);
}

/** The hidden input every `<form method="post">` must contain: `{csrfField(c)}`. */
export function csrfField(c: Context<WebEnv>) {
  return <input type="hidden" name={CSRF_FIELD} value={csrfToken(c)} />;
}

function sameOrigin(c: Context<WebEnv>, origin: string): boolean {
  if (origin === new URL(c.req.url).origin) return true;
  return origin === new URL(c.get('ctx').config.urls.control).origin;
}

/** Refuses (403 `csrf_failed`) any unsafe-method request without a matching token or from a foreign origin. */
export function csrfProtection(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    if (SAFE_METHODS.has(c.req.method)) return next();
    const origin = c.req.header('origin');
    if (c.req.header('sec-fetch-site') === 'cross-site' || (origin !== undefined && !sameOrigin(c, origin)))
      throw new SvcError('csrf_failed', 'This form was posted from another site.');
    const secret = readCookie(c, 'csrf');
    const type = c.req.header('content-type') ?? '';
    const isForm = type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data');
    const sent = isForm ? (await c.req.parseBody())[CSRF_FIELD] : undefined;
    if (!secret || typeof sent !== 'string' || !SECRET_FORMAT.test(sent) || !safeEqualHex(sent, tokenFor(c, secret)))
      throw new SvcError(
        'csrf_failed',
        'The form is missing its security token or it expired: reload the page and try again.',
      );
    return next();
  };
}
