/**
 * REST adapter of control/auth/principal.ts: the middleware resolves the bearer token once per request into
 * `c.get('principal')`; the require* helpers apply the plain assert* guards to it.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bearerToken } from '../../core/key-format.js';
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
