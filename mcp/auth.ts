/**
 * Who is calling the MCP endpoint: an `svc_live_` API key or an OAuth access token (`svc_at_`) as the bearer, the
 * key bound to the session, or nobody (development only). A session token (`sess_`) is control-plane only (spec §5).
 */
import type { AppContext } from '../control/context.js';
import { principalFromToken, type Principal } from '../control/auth/principal.js';
import { isApiKeyFormat, isSessionTokenFormat } from '../core/key-format.js';
import { resolveAccessToken } from '../control/oauth/access-token.js';
import { isAccessTokenFormat } from '../control/oauth/token-format.js';
import { SvcError } from '../core/errors.js';
import type { Scope } from '../core/scopes.js';
import type { PrincipalCache } from './principal-cache.js';

export interface Caller {
  kind: 'api_key' | 'oauth' | 'anonymous';
  principal: Principal | undefined;
  /** The plaintext key tools act as (control calls and the gateway); absent for anonymous callers. */
  key: string | undefined;
}

export const ANONYMOUS: Caller = { kind: 'anonymous', principal: undefined, key: undefined };

type AuthCtx = Pick<AppContext, 'db' | 'clock' | 'secretKey'>;

/**
 * Resolves a bearer credential; throws SvcError `unauthorized` (or `key_revoked`, `org_suspended`). An API key's
 * principal comes from `principals` when the process keeps that cache (mcp/principal-cache.ts).
 */
export async function callerFromBearer(
  ctx: AuthCtx,
  token: string,
  resource: string,
  principals?: PrincipalCache,
): Promise<Caller> {
  if (isApiKeyFormat(token)) {
    const principal = principals ? await principals.ofApiKey(token) : await principalFromToken(ctx, token);
    return { kind: 'api_key', principal, key: token };
  }
  if (isAccessTokenFormat(token)) {
    const t = await resolveAccessToken(ctx, token, resource);
    return { kind: 'oauth', principal: t.principal, key: t.gatewayKey ?? undefined };
  }
  if (isSessionTokenFormat(token)) {
    throw new SvcError(
      'unauthorized',
      'Session tokens (sess_…) work on the control plane only; send an API key (svc_live_…) or an OAuth access token',
      { next: { action: 'authenticate' } },
    );
  }
  throw new SvcError('unauthorized', 'The bearer is neither an svc_live_ API key nor an OAuth access token', {
    next: { action: 'authenticate' },
  });
}

export function hasScope(caller: Caller, scope: Scope): boolean {
  return caller.principal?.scopes.has(scope) ?? false;
}
