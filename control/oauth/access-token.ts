/**
 * The resource server's side of OAuth: an access token (`svc_at_…`) resolves to the Principal of the key its
 * grant acts as, the same Principal that key gives as a bearer credential. The token must be bound (RFC 8707) to
 * the resource asking, unexpired and unrevoked, and so must its grant and key.
 */
import type { AppContext } from '../context.js';
import { decryptSecret, sha256Hex } from '../../core/crypto.js';
import { SvcError } from '../../core/errors.js';
import { principalFromKeyId, type Principal } from '../auth/principal.js';
import { sameResource } from './oauth-settings.js';
import { isAccessTokenFormat } from './token-format.js';

export interface ResolvedAccessToken {
  principal: Principal;
  grantId: string;
  /**
   * The `svc_live_` key the grant acts as, for calls the resource server makes to the gateway on the client's
   * behalf (call_api). Every grant keeps it sealed (minted keys and step-up keys alike); null only for a grant
   * whose key_secret was never written.
   */
  gatewayKey: string | null;
}

type TokenCtx = Pick<AppContext, 'db' | 'clock' | 'secretKey'>;

export async function resolveAccessToken(ctx: TokenCtx, token: string, resource: string): Promise<ResolvedAccessToken> {
  const unauthorized = (detail: string) => new SvcError('unauthorized', detail, { next: { action: 'authenticate' } });
  if (!isAccessTokenFormat(token)) throw unauthorized('Not an OAuth access token (svc_at_…)');
  const row = await ctx.db
    .selectFrom('oauth_tokens')
    .innerJoin('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id')
    .select([
      'oauth_tokens.kind',
      'oauth_tokens.expires_at',
      'oauth_tokens.revoked_at',
      'oauth_grants.id as grant_id',
      'oauth_grants.key_id',
      'oauth_grants.resource',
      'oauth_grants.revoked_at as grant_revoked_at',
      'oauth_grants.key_secret',
    ])
    .where('oauth_tokens.token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (!row || row.kind !== 'access') throw unauthorized('Unknown access token');
  if (row.revoked_at !== null || row.grant_revoked_at !== null) throw unauthorized('The access token has been revoked');
  if (row.expires_at <= ctx.clock.now()) throw unauthorized('The access token has expired: refresh it');
  if (!sameResource(row.resource, resource))
    throw unauthorized(`The access token was issued for ${row.resource}, not this resource`);
  let principal: Principal;
  try {
    principal = await principalFromKeyId(ctx, row.key_id);
  } catch (e) {
    // A revoked key ends its grants' tokens: to an OAuth client that is an invalid token (401), not a refusal (403).
    if (e instanceof SvcError && e.code === 'key_revoked')
      throw unauthorized('The key behind this access token has been revoked');
    throw e;
  }
  return {
    principal,
    grantId: row.grant_id,
    gatewayKey: row.key_secret === null ? null : decryptSecret(ctx.secretKey, row.key_secret),
  };
}
