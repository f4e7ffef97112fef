/**
 * The token endpoint's grants (authorization_code with PKCE S256, refresh_token with rotation) and revocation
 * (RFC 7009). A code or refresh token presented a second time revokes its whole grant: whoever replays it, the
 * legitimate client or a thief, the family is no longer trusted (OAuth 2.1 §4.3.1, §6.1).
 */
import type { AppContext } from '../context.js';
import type { TokenResponse } from '../../core/schemas/oauth.schemas.js';
import type { Db } from '../../core/db/database.js';
import { sha256Hex } from '../../core/crypto.js';
import { OAuthError } from './oauth-error.js';
import { ACCESS_TOKEN_TTL_MS, REFRESH_TOKEN_TTL_MS, sameResource } from './oauth-settings.js';
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX, mintOAuthSecret } from './token-format.js';
import { isCodeVerifier, verifyS256 } from './pkce.js';
import { revokeGrant } from './grants.service.js';

export type TokenParams = Readonly<Record<string, string | undefined>>;
type TokenCtx = Pick<AppContext, 'db' | 'clock'>;

function required(params: TokenParams, name: string): string {
  const v = params[name];
  if (!v) throw new OAuthError('invalid_request', `${name} is required`);
  return v;
}

async function _issuePair(db: Db, grantId: string, scope: string, now: number): Promise<TokenResponse> {
  const access = mintOAuthSecret(ACCESS_TOKEN_PREFIX);
  const refresh = mintOAuthSecret(REFRESH_TOKEN_PREFIX);
  await db
    .insertInto('oauth_tokens')
    .values([
      {
        token_hash: access.hash,
        kind: 'access',
        grant_id: grantId,
        created_at: now,
        expires_at: now + ACCESS_TOKEN_TTL_MS,
        rotated_at: null,
        revoked_at: null,
      },
      {
        token_hash: refresh.hash,
        kind: 'refresh',
        grant_id: grantId,
        created_at: now,
        expires_at: now + REFRESH_TOKEN_TTL_MS,
        rotated_at: null,
        revoked_at: null,
      },
    ])
    .execute();
  return {
    access_token: access.plaintext,
    token_type: 'Bearer',
    expires_in: Math.floor(ACCESS_TOKEN_TTL_MS / 1000),
    refresh_token: refresh.plaintext,
    scope,
  };
}

function checkResource(params: TokenParams, grantResource: string): void {
  const resource = params.resource;
  if (resource !== undefined && !sameResource(resource, grantResource))
    throw new OAuthError('invalid_target', `This grant is bound to the resource ${grantResource}`);
}

/** A grant's state as a token request sees it. */
async function _liveGrant(db: Db, grantId: string) {
  return db
    .selectFrom('oauth_grants')
    .innerJoin('api_keys', 'api_keys.id', 'oauth_grants.key_id')
    .select([
      'oauth_grants.id',
      'oauth_grants.client_id',
      'oauth_grants.resource',
      'oauth_grants.scope',
      'oauth_grants.revoked_at',
      'api_keys.revoked_at as key_revoked_at',
    ])
    .where('oauth_grants.id', '=', grantId)
    .executeTakeFirstOrThrow();
}

/** @public The token endpoint: its credential is the code and PKCE verifier it is given (RFC 6749). */
export async function exchangeAuthorizationCode(ctx: TokenCtx, params: TokenParams): Promise<TokenResponse> {
  const code = required(params, 'code');
  const clientId = required(params, 'client_id');
  const redirectUri = required(params, 'redirect_uri');
  const verifier = required(params, 'code_verifier');
  if (!isCodeVerifier(verifier))
    throw new OAuthError('invalid_request', 'code_verifier must be 43-128 characters of [A-Za-z0-9._~-]');
  const now = ctx.clock.now();
  const row = await ctx.db
    .selectFrom('oauth_codes')
    .selectAll()
    .where('code_hash', '=', sha256Hex(code))
    .executeTakeFirst();
  if (!row) throw new OAuthError('invalid_grant', 'Unknown authorization code');
  const grant = await _liveGrant(ctx.db, row.grant_id);
  if (grant.client_id !== clientId) throw new OAuthError('invalid_grant', 'The code was issued to another client');
  if (row.consumed_at !== null) {
    await revokeGrant(ctx, row.grant_id, 'authorization code reused');
    throw new OAuthError('invalid_grant', 'The authorization code was already used; its tokens are revoked');
  }
  if (row.expires_at <= now) throw new OAuthError('invalid_grant', 'The authorization code has expired');
  if (row.redirect_uri !== redirectUri)
    throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request');
  if (!verifyS256(verifier, row.code_challenge))
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge (PKCE S256)');
  checkResource(params, grant.resource);
  if (grant.revoked_at !== null || grant.key_revoked_at !== null)
    throw new OAuthError('invalid_grant', 'The grant has been revoked');
  return ctx.db.transaction().execute(async (trx) => {
    // Conditional update: of two concurrent redemptions exactly one wins.
    const won = await trx
      .updateTable('oauth_codes')
      .set({ consumed_at: now })
      .where('code_hash', '=', row.code_hash)
      .where('consumed_at', 'is', null)
      .executeTakeFirst();
    if (won.numUpdatedRows !== 1n) throw new OAuthError('invalid_grant', 'The authorization code was already used');
    return _issuePair(trx, grant.id, grant.scope, now);
  });
}

/** @public The token endpoint: its credential is the refresh token it is given. */
export async function refreshAccessToken(ctx: TokenCtx, params: TokenParams): Promise<TokenResponse> {
  const token = required(params, 'refresh_token');
  const clientId = required(params, 'client_id');
  const now = ctx.clock.now();
  const row = await ctx.db
    .selectFrom('oauth_tokens')
    .selectAll()
    .where('token_hash', '=', sha256Hex(token))
    .where('kind', '=', 'refresh')
    .executeTakeFirst();
  if (!row) throw new OAuthError('invalid_grant', 'Unknown refresh token');
  const grant = await _liveGrant(ctx.db, row.grant_id);
  if (grant.client_id !== clientId)
    throw new OAuthError('invalid_grant', 'The refresh token was issued to another client');
  if (grant.revoked_at !== null || row.revoked_at !== null || grant.key_revoked_at !== null)
    throw new OAuthError('invalid_grant', 'The refresh token has been revoked');
  if (row.rotated_at !== null) {
    await revokeGrant(ctx, row.grant_id, 'refresh token reused');
    throw new OAuthError('invalid_grant', 'The refresh token was already used; every token of this grant is revoked');
  }
  if (row.expires_at <= now) throw new OAuthError('invalid_grant', 'The refresh token has expired');
  checkResource(params, grant.resource);
  const scope = params.scope;
  if (scope !== undefined && scope.split(' ').some((s) => s && !grant.scope.split(' ').includes(s)))
    throw new OAuthError('invalid_scope', 'A refresh cannot widen the granted scope');
  return ctx.db.transaction().execute(async (trx) => {
    const won = await trx
      .updateTable('oauth_tokens')
      .set({ rotated_at: now })
      .where('token_hash', '=', row.token_hash)
      .where('rotated_at', 'is', null)
      .executeTakeFirst();
    if (won.numUpdatedRows !== 1n) throw new OAuthError('invalid_grant', 'The refresh token was already used');
    return _issuePair(trx, grant.id, grant.scope, now);
  });
}

/**
 * RFC 7009: an unknown, foreign or already revoked token is answered like a revoked one (200), so revocation
 * reveals nothing. A refresh token ends its grant; an access token ends itself.
 * @public RFC 7009: whoever holds a token may revoke it.
 */
export async function revokeToken(ctx: TokenCtx, params: TokenParams): Promise<void> {
  const token = required(params, 'token');
  const clientId = required(params, 'client_id');
  const hint = params.token_type_hint;
  if (hint !== undefined && hint !== 'access_token' && hint !== 'refresh_token')
    throw new OAuthError('unsupported_token_type', 'token_type_hint must be access_token or refresh_token');
  const row = await ctx.db
    .selectFrom('oauth_tokens')
    .innerJoin('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id')
    .select(['oauth_tokens.token_hash', 'oauth_tokens.kind', 'oauth_tokens.grant_id', 'oauth_grants.client_id'])
    .where('oauth_tokens.token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (!row || row.client_id !== clientId) return;
  if (row.kind === 'refresh') return revokeGrant(ctx, row.grant_id, 'refresh token revoked by the client');
  await ctx.db
    .updateTable('oauth_tokens')
    .set({ revoked_at: ctx.clock.now() })
    .where('token_hash', '=', row.token_hash)
    .where('revoked_at', 'is', null)
    .execute();
}
