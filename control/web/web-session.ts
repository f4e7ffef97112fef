/**
 * Cookie sessions for the web pages. The cookie carries a normal `sess_…` token (stored hashed in `sessions`,
 * exactly like the REST login); `loadWebSession` resolves it once per request. Page owners use
 * `requireWebSession(c)` (principal, or a redirect to /login?next=…) and `safeNext` for any post-login target.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { principalFromToken, type Principal } from '../auth/principal.js';
import { isSessionTokenFormat } from '../../core/key-format.js';
import { SvcError, type ErrorCode } from '../../core/errors.js';
import { SESSION_TTL_MS } from '../sessions/sessions.service.js';
import { sessionIdentity } from '../sessions/session-identity.service.js';
import { clearCookie, readCookie, writeCookie } from './cookies.js';
import type { WebEnv, WebSession } from './web-env.js';

/** The refusals of a session token that mean "not signed in" (unauthorized / forbidden in kind). */
const NOT_SIGNED_IN: ReadonlySet<ErrorCode> = new Set(['unauthorized', 'forbidden', 'org_suspended']);

export function loadWebSession(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const token = readCookie(c, 'session');
    if (token !== undefined) {
      const session = isSessionTokenFormat(token) ? await resolve(c, token) : undefined;
      if (session) c.set('webSession', session);
      else clearCookie(c, 'session');
    }
    await next();
  };
}

async function resolve(c: Context<WebEnv>, token: string): Promise<WebSession | undefined> {
  const ctx = c.get('ctx');
  let principal: Principal;
  try {
    principal = await principalFromToken(ctx, token);
  } catch (e) {
    // Ended, expired or unknown (`unauthorized`), or the org suspended (`org_suspended`, a 403): the person simply
    // is not signed in. Anything else (a locked or broken database) is not an answer about the cookie: it is logged
    // and fails the request loudly, and the cookie stays.
    if (e instanceof SvcError && NOT_SIGNED_IN.has(e.code)) return undefined;
    ctx.log.error('web session lookup failed', {
      request_id: c.get('requestId'),
      err: e instanceof Error ? e : String(e),
    });
    throw e;
  }
  if (principal.userId === null) return undefined;
  const who = await sessionIdentity(ctx.db, principal.userId);
  return who ? { principal, ...who } : undefined;
}

/** Starts the cookie session after a successful code login. */
export function setSessionCookie(c: Context<WebEnv>, sessionToken: string): void {
  writeCookie(c, 'session', sessionToken, Math.floor(SESSION_TTL_MS / 1000));
}

export function clearSessionCookie(c: Context<WebEnv>): void {
  clearCookie(c, 'session');
}

/**
 * The signed-in session's principal (full scopes, `kind: 'session'`), or, when nobody is signed in, a 303 to
 * `/login?next=<this page>` (for a GET; other methods come back to `fallbackNext`). Call it first in a handler.
 */
export function requireWebSession(c: Context<WebEnv>, fallbackNext = '/dashboard'): Principal {
  const session = c.get('webSession');
  if (session) return session.principal;
  const url = new URL(c.req.url);
  const next = c.req.method === 'GET' ? url.pathname + url.search : safeNext(fallbackNext);
  throw new HTTPException(303, { res: c.redirect(`/login?next=${encodeURIComponent(next)}`, 303) });
}

/**
 * A post-login target that can only be a path on this site: `/…` but not `//host`, `/\host`, a scheme,
 * control characters, or a path that resolves to `//host` (`/..//host`, `/%2e%2e//host`). Anything else becomes `/dashboard`.
 */
export function safeNext(next: string | undefined | null): string {
  const fallback = '/dashboard';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is this check's purpose.
  if (!next || next.length > 2000 || !next.startsWith('/') || /[\\\u0000-\u001f\u007f]/.test(next)) return fallback;
  if (next.startsWith('//')) return fallback;
  const base = 'http://svc.invalid';
  let url: URL;
  try {
    url = new URL(next, base);
  } catch {
    return fallback;
  }
  if (url.origin !== base) return fallback;
  // Dot segments resolve away (`/..//evil.example` -> `//evil.example`): a resolved path that starts with two
  // slashes (or a slash and a backslash, which browsers read the same) is protocol-relative, so it is refused.
  if (/^\/[\/\\]/.test(url.pathname)) return fallback;
  return url.pathname + url.search + url.hash;
}
