/**
 * REST adapter of control/auth/principal.ts: the middleware resolves the bearer token once per request into
 * `c.get('principal')`; the require* helpers apply the plain assert* guards to it.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bearerToken } from '../../core/key-format.js';
import { SvcError } from '../../core/errors.js';
import type { Scope } from '../../core/scopes.js';
import type { AppEnv } from '../lib/http.js';
import {
  assertAuthenticated,
  assertOrgAdmin,
  assertScope,
  assertSession,
  principalFromToken,
  type Principal,
} from './principal.js';

export function authenticate(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c.req.header('authorization'));
    if (token !== undefined) c.set('principal', await principalFromToken(c.get('ctx'), token));
    await next();
  };
}

export function requireAuth(c: Context<AppEnv>): Principal {
  return assertAuthenticated(c.get('principal'));
}

export function requireScope(c: Context<AppEnv>, scope: Scope): Principal {
  return assertScope(c.get('principal'), scope);
}

export function requireSession(c: Context<AppEnv>): Principal {
  return assertSession(c.get('principal'));
}

/** Owner or admin, signed in as a human (session). */
export function requireOrgAdminSession(c: Context<AppEnv>): Principal {
  return assertOrgAdmin(assertSession(c.get('principal')));
}

/**
 * A credential that is sent must be valid, even on public routes: `Bearer a b`, a bare `Bearer` or `Basic …` is a
 * 401, not an anonymous request. Runs before `authenticate()`.
 */
export function refuseMalformedAuthorization(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    if (header !== undefined && bearerToken(header) === undefined)
      throw new SvcError('unauthorized', 'Authorization must be `Bearer <svc_live_… key or sess_… token>`.', {
        next: { action: 'authenticate' },
      });
    await next();
  };
}
