/**
 * Tools run the control plane's own /v1 operations in-process (no network hop): the same validation, scope checks,
 * serialisers and error codes as REST, so a tool is a thin adapter and never a second copy of a rule.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppContext } from '../control/context.js';
import type { Principal } from '../control/auth/principal.js';
import { authenticate } from '../control/auth/rest-auth.js';
import { newId } from '../core/ids.js';
import { onError, type AppEnv } from '../control/lib/http.js';
import { DOMAIN_ROUTES } from '../control/app.js';

/** Who a tool acts as: an API key sent as the bearer, or a Principal resolved elsewhere (OAuth without a key). */
export interface Acting {
  key: string | undefined;
  principal: Principal | undefined;
  /** The MCP client's address, for the control plane's per-client limits (registration). */
  ip: string;
}

export interface ControlAnswer {
  status: number;
  body: unknown;
  headers: Headers;
}

export type QueryValue = string | number | boolean | undefined;

export interface ControlCalls {
  call(
    acting: Acting,
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    opts?: { query?: Record<string, QueryValue>; body?: unknown },
  ): Promise<ControlAnswer>;
}

interface Bindings {
  principal: Principal | undefined;
  incoming: { socket: { remoteAddress: string; remotePort: number; remoteFamily: string } };
}

export function createControlCalls(ctx: AppContext): ControlCalls {
  const app = new OpenAPIHono<AppEnv & { Bindings: Bindings }>();
  app.use('*', async (c, next) => {
    c.set('ctx', ctx);
    c.set('requestId', newId('req'));
    c.set('principal', c.env.principal);
    await next();
  });
  app.use('/v1/*', authenticate());
  for (const routes of DOMAIN_ROUTES) {
    app.route('/', routes as unknown as OpenAPIHono<AppEnv & { Bindings: Bindings }>);
  }
  app.onError((e, c) => onError(e, c as unknown as Context<AppEnv>));

  return {
    async call(acting, method, path, opts = {}) {
      const url = new URL(path, 'http://control.internal');
      for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
      const headers: Record<string, string> = {};
      if (acting.key) headers.authorization = `Bearer ${acting.key}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const env: Bindings = {
        principal: acting.key ? undefined : acting.principal,
        incoming: { socket: { remoteAddress: acting.ip, remotePort: 0, remoteFamily: 'IPv4' } },
      };
      const res = await app.request(
        url.toString(),
        { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) },
        env,
      );
      const text = await res.text();
      let body: unknown = null;
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      return { status: res.status, body, headers: res.headers };
    },
  };
}
