/**
 * REST adapter of control/auth/principal.ts: the middleware resolves the bearer token once per request into
 * `c.get('principal')`, which a route hands to its service unchecked: the service decides who may do what.
 */
import type { MiddlewareHandler } from 'hono';
import { bearerToken } from '../../core/key-format.js';
import { SvcError } from '../../core/errors.js';
import type { AppEnv } from '../lib/http.js';
import { principalFromToken } from './principal.js';

export function authenticate(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c.req.header('authorization'));
    if (token !== undefined) c.set('principal', await principalFromToken(c.get('ctx'), token));
    await next();
  };
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
