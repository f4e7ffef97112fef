/**
 * Who is calling the control plane: an API key (its stored scopes) or a session (full scopes, a user).
 * `authenticate` resolves the bearer token once per request; the require* guards enforce the spec's rules.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { sha256Hex } from '../lib/crypto.js';
import { SvcError } from '../lib/errors.js';
import type { AppEnv } from '../lib/http.js';
import type { AppContext } from '../context.js';
import { bearerToken, isApiKeyFormat, isSessionTokenFormat } from '../keys/key-format.js';
import { ALL_SCOPES, parseScopes, type Scope } from './scopes.js';

export interface Principal {
  kind: 'key' | 'session';
  orgId: string;
  /** The human behind a session, or the user who created the key (null for registered agent keys). */
  userId: string | null;
  keyId: string | null;
  sessionId: string | null;
  role: 'owner' | 'admin' | null;
  scopes: ReadonlySet<Scope>;
}

export function authenticate(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c.req.header('authorization'));
    if (token !== undefined) c.set('principal', await principalFromToken(c.get('ctx'), token));
    await next();
  };
}

/** Resolves a bearer credential (API key or session token); throws `unauthorized` and friends when it is not usable. */
export async function principalFromToken(
  { db, clock }: Pick<AppContext, 'db' | 'clock'>,
  token: string,
): Promise<Principal> {
  const now = clock.now();
  if (isApiKeyFormat(token)) {
    const row = await db
      .selectFrom('api_keys')
      .innerJoin('orgs', 'orgs.id', 'api_keys.org_id')
      .leftJoin('users', 'users.id', 'api_keys.created_by_user_id')
      .select([
        'api_keys.id as key_id',
        'api_keys.org_id',
        'api_keys.scopes',
        'api_keys.revoked_at',
        'api_keys.created_by_user_id',
        'orgs.status as org_status',
        'users.role',
      ])
      .where('api_keys.key_hash', '=', sha256Hex(token))
      .executeTakeFirst();
    if (!row) throw new SvcError('unauthorized', 'Unknown API key');
    if (row.revoked_at !== null) throw new SvcError('key_revoked', 'This API key has been revoked');
    if (row.org_status === 'suspended') throw new SvcError('org_suspended', 'This organization is suspended');
    return {
      kind: 'key',
      orgId: row.org_id,
      userId: row.created_by_user_id,
      keyId: row.key_id,
      sessionId: null,
      role: row.role ?? null,
      scopes: new Set(parseScopes(row.scopes)),
    };
  }
  if (isSessionTokenFormat(token)) {
    const row = await db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .innerJoin('orgs', 'orgs.id', 'sessions.org_id')
      .select([
        'sessions.id',
        'sessions.org_id',
        'sessions.user_id',
        'sessions.expires_at',
        'sessions.ended_at',
        'users.role',
        'orgs.status as org_status',
      ])
      .where('sessions.token_hash', '=', sha256Hex(token))
      .executeTakeFirst();
    if (!row || row.ended_at !== null || row.expires_at <= now) {
      throw new SvcError('unauthorized', 'Session token is unknown, ended or expired');
    }
    if (row.org_status === 'suspended') throw new SvcError('org_suspended', 'This organization is suspended');
    return {
      kind: 'session',
      orgId: row.org_id,
      userId: row.user_id,
      keyId: null,
      sessionId: row.id,
      role: row.role,
      scopes: new Set(ALL_SCOPES),
    };
  }
  throw new SvcError('unauthorized', 'Credential is neither an svc_live_ API key nor a sess_ session token');
}

export function requireAuth(c: Context<AppEnv>): Principal {
  const p = c.get('principal');
  if (!p) throw new SvcError('unauthorized', 'Send Authorization: Bearer <svc_live_… key or sess_… token>');
  return p;
}

export function requireScope(c: Context<AppEnv>, scope: Scope): Principal {
  const p = requireAuth(c);
  if (!p.scopes.has(scope)) {
    const hint =
      scope === 'billing:write' || scope === 'provider:write'
        ? ' Verify an email for this org (POST /v1/auth/email then POST /v1/auth/verify-email) to add it.'
        : '';
    throw new SvcError('insufficient_scope', `This credential lacks the ${scope} scope.${hint}`, {
      extra: { required_scope: scope },
    });
  }
  return p;
}

/** Dashboard actions (terms acceptance, profile edits) need a human session, not an API key. */
export function requireSession(c: Context<AppEnv>): Principal {
  const p = requireAuth(c);
  if (p.kind !== 'session') {
    throw new SvcError(
      'session_required',
      'This action needs a session token (sess_…): log in with POST /v1/auth/login/request',
    );
  }
  return p;
}

/** Owner or admin session (e.g. accepting a provider's terms for the org). */
export function requireOrgAdminSession(c: Context<AppEnv>): Principal {
  const p = requireSession(c);
  if (p.role !== 'owner' && p.role !== 'admin')
    throw new SvcError('forbidden', 'Only an org owner or admin may do this');
  return p;
}
