/**
 * Who is calling: an API key (its stored scopes) or a session (full scopes, a user). Plain functions, no Hono:
 * `principalFromToken` resolves a bearer token once; the assert* guards enforce the spec's rules on a Principal and
 * throw SvcErrors whose `next` step each surface renders (REST path, MCP tool, CLI command). REST uses them through
 * control/auth/rest-auth.ts; MCP, pages and tests call them directly.
 */
import type { CompiledQuery } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { Clock } from '../../core/clock.js';
import { sha256Hex } from '../../core/crypto.js';
import { SvcError } from '../../core/errors.js';
import { isApiKeyFormat, isSessionTokenFormat } from '../../core/key-format.js';
import { ALL_SCOPES, parseScopes, type Scope } from '../../core/scopes.js';

export interface Principal {
  kind: 'key' | 'session';
  orgId: string;
  /** The human behind a session, or the user who created the key (null for registered agent keys). */
  userId: string | null;
  keyId: string | null;
  sessionId: string | null;
  role: 'owner' | 'admin' | null;
  scopes: ReadonlySet<Scope>;
  /**
   * Keys only: whether the key's org has a verified email, i.e. a person can sign in to it. A registered agent key's
   * org has none until one is verified: a step that needs a person then starts there (assertSession).
   */
  orgEmailVerified?: boolean;
}

/** What resolving a credential needs; an AppContext satisfies it. */
export interface AuthContext {
  db: Db;
  clock: Clock;
}

/** An API key (`svc_live_…`) or session token (`sess_…`) to its Principal; throws on unknown, revoked, suspended. */
export async function principalFromToken(ctx: AuthContext, token: string): Promise<Principal> {
  if (isApiKeyFormat(token)) return principalFromApiKey(ctx, token);
  if (isSessionTokenFormat(token)) return principalFromSessionToken(ctx, token);
  throw new SvcError('unauthorized', 'Credential is neither an svc_live_ API key nor a sess_ session token.', {
    next: { action: 'authenticate' },
  });
}

function principalFromApiKey(ctx: AuthContext, token: string): Promise<Principal> {
  return _keyPrincipal(ctx, 'key_hash', sha256Hex(token));
}

/**
 * The Principal of a key known by id, exactly as the key would give it as a bearer: for credentials that stand
 * for a key without being it (an OAuth access token resolves to its grant's key).
 */
export function principalFromKeyId(ctx: AuthContext, keyId: string): Promise<Principal> {
  return _keyPrincipal(ctx, 'id', keyId);
}

/** The key's principal query for one column; the value compared is its only parameter. */
function compileKeyPrincipal(db: Db, column: 'key_hash' | 'id') {
  return db
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
      'orgs.email_verified_at as org_email_verified_at',
      'users.role',
    ])
    .where(`api_keys.${column}`, '=', '')
    .compile();
}
type KeyPrincipalQuery = ReturnType<typeof compileKeyPrincipal>;
type KeyPrincipalRow = KeyPrincipalQuery extends CompiledQuery<infer R> ? R : never;

/**
 * Compiled once per database handle: every authenticated request runs this query, and building and compiling it
 * with kysely cost more than SQLite's prepared, indexed read. Only the looked-up value varies.
 */
const keyPrincipalQueries = new WeakMap<Db, Record<'key_hash' | 'id', KeyPrincipalQuery>>();

function keyPrincipalQuery(db: Db, column: 'key_hash' | 'id'): KeyPrincipalQuery {
  let queries = keyPrincipalQueries.get(db);
  if (!queries) {
    queries = { key_hash: compileKeyPrincipal(db, 'key_hash'), id: compileKeyPrincipal(db, 'id') };
    keyPrincipalQueries.set(db, queries);
  }
  return queries[column];
}

async function _keyPrincipal({ db }: AuthContext, column: 'key_hash' | 'id', value: string): Promise<Principal> {
  const compiled = keyPrincipalQuery(db, column);
  const row = (await db.executeQuery<KeyPrincipalRow>({ ...compiled, parameters: [value] })).rows[0];
  if (!row) throw new SvcError('unauthorized', 'Unknown API key.', { next: { action: 'authenticate' } });
  if (row.revoked_at !== null)
    throw new SvcError('key_revoked', 'This API key has been revoked', { next: { action: 'get_key' } });
  if (row.org_status === 'suspended') throw new SvcError('org_suspended', 'This organization is suspended');
  return {
    kind: 'key',
    orgId: row.org_id,
    userId: row.created_by_user_id,
    keyId: row.key_id,
    sessionId: null,
    role: row.role ?? null,
    scopes: new Set(parseScopes(row.scopes)),
    orgEmailVerified: row.org_email_verified_at !== null,
  };
}

async function principalFromSessionToken({ db, clock }: AuthContext, token: string): Promise<Principal> {
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
  if (!row || row.ended_at !== null || row.expires_at <= clock.now()) {
    throw new SvcError('unauthorized', 'Session token is unknown, ended or expired.', { next: { action: 'log_in' } });
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

/** Any valid credential; `undefined` (none sent) is `unauthorized`. */
export function assertAuthenticated(p: Principal | undefined): Principal {
  if (!p) throw new SvcError('unauthorized', 'This needs a credential.', { next: { action: 'authenticate' } });
  return p;
}

/** The credential holds `scope`. Scopes only email verification grants say so in `next`. */
export function assertScope(p: Principal | undefined, scope: Scope): Principal {
  const principal = assertAuthenticated(p);
  if (!principal.scopes.has(scope)) {
    const viaVerification = scope === 'billing:write' || scope === 'provider:write';
    throw new SvcError(
      'insufficient_scope',
      `This credential lacks the ${scope} scope.${viaVerification ? ' Verifying an email for this org adds it.' : ''}`,
      { extra: { required_scope: scope }, ...(viaVerification ? { next: { action: 'verify_email' } } : {}) },
    );
  }
  return principal;
}

/** Dashboard actions (terms acceptance, profile edits) need a human session, not an API key. */
export function assertSession(p: Principal | undefined): Principal {
  const principal = assertAuthenticated(p);
  if (principal.kind !== 'session') {
    // Signing in reaches a key's org only through its verified email: without one, a login would make another org.
    const noPerson = principal.orgEmailVerified === false;
    throw new SvcError(
      'session_required',
      noPerson
        ? "This action needs a person signed in, and this key's org has no verified email to sign in with yet."
        : 'This action needs a session token (sess_…), not an API key.',
      { next: noPerson ? { action: 'verify_email' } : { action: 'log_in' } },
    );
  }
  return principal;
}

/** The human behind the credential is an org owner or admin (e.g. accepting a provider's terms for the org). */
export function assertOrgAdmin(p: Principal | undefined): Principal {
  const principal = assertAuthenticated(p);
  if (principal.role !== 'owner' && principal.role !== 'admin') {
    throw new SvcError('forbidden', 'Only an org owner or admin may do this', { next: { action: 'ask_org_admin' } });
  }
  return principal;
}

/**
 * Public reads (the catalog, the market, provider pages) need no credential; one that is sent must carry `scope`
 * (docs/catalog.md: a key without `catalog:read` is refused even where a stranger is served).
 */
export function assertPublicRead(p: Principal | undefined, scope: Scope): Principal | undefined {
  return p === undefined ? undefined : assertScope(p, scope);
}

/**
 * The operator acting for one org from this machine (the demo seed; svc-admin): every scope of that org, as a key
 * with no row (no caps to carve, no user). Never built from a request: only code the operator runs calls this.
 */
export function operatorPrincipal(orgId: string): Principal {
  return { kind: 'key', orgId, userId: null, keyId: null, sessionId: null, role: null, scopes: new Set(ALL_SCOPES) };
}

/** A person signed in with a session: its principal with the user id a session always carries. */
export function assertPerson(p: Principal | undefined): Principal & { userId: string } {
  const principal = assertSession(p);
  const { userId } = principal;
  if (userId === null)
    throw new SvcError('session_required', 'This needs a person signed in.', { next: { action: 'log_in' } });
  return { ...principal, userId };
}
