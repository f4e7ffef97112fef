/**
 * Grants: a person's approval lets a client act as one full-scope key of their org on the MCP resource. Approval
 * mints that key (origin `oauth`, revoked with the grant) and a one-time code; revoking a grant ends every code and
 * token of its family (RFC 7009, refresh-token reuse, authorization-code reuse).
 */
import type { AppContext } from '../context.js';
import type { Db } from '../db/database.js';
import { newId } from '../lib/ids.js';
import { encryptSecret } from '../lib/crypto.js';
import { ALL_SCOPES, formatScopes } from '../auth/scopes.js';
import { insertKey, revokeKey } from '../keys/keys.service.js';
import { CODE_TTL_MS } from './oauth-settings.js';
import { mintAuthorizationCode } from './token-format.js';
import { redirectWith, type AuthorizationRequest } from './authorization-request.js';

export interface Approver {
  orgId: string;
  userId: string;
}

function keyName(req: AuthorizationRequest): string {
  const label = req.client.clientName ?? (new URL(req.redirectUri).host || req.client.clientId);
  return `OAuth: ${label}`.slice(0, 64);
}

/** Records the approval and answers with the client's redirect carrying a one-time code. */
export async function approveAuthorization(
  ctx: Pick<AppContext, 'db' | 'clock' | 'secretKey'>,
  req: AuthorizationRequest,
  approver: Approver,
  issuer: string,
): Promise<string> {
  const now = ctx.clock.now();
  const code = mintAuthorizationCode();
  await ctx.db.transaction().execute(async (trx) => {
    const { row: key, plaintext } = await insertKey(
      trx,
      {
        orgId: approver.orgId,
        name: keyName(req),
        scopes: ALL_SCOPES,
        origin: 'oauth',
        createdByUserId: approver.userId,
      },
      now,
    );
    const grantId = newId('ogr', now);
    await trx
      .insertInto('oauth_grants')
      .values({
        id: grantId,
        client_id: req.client.clientId,
        org_id: approver.orgId,
        user_id: approver.userId,
        key_id: key.id,
        key_minted: 1,
        key_secret: encryptSecret(ctx.secretKey, plaintext),
        resource: req.resource,
        scope: formatScopes(ALL_SCOPES),
        created_at: now,
        revoked_at: null,
        revoked_reason: null,
      })
      .execute();
    await trx
      .insertInto('oauth_codes')
      .values({
        code_hash: code.hash,
        grant_id: grantId,
        redirect_uri: req.redirectUri,
        code_challenge: req.codeChallenge,
        created_at: now,
        expires_at: now + CODE_TTL_MS,
        consumed_at: null,
      })
      .execute();
  });
  return redirectWith(req.redirectUri, { code: code.plaintext }, req.state, issuer);
}

export function denyAuthorization(req: AuthorizationRequest, issuer: string): string {
  return redirectWith(
    req.redirectUri,
    { error: 'access_denied', error_description: 'The person declined the request' },
    req.state,
    issuer,
  );
}

async function _revokeFamily(db: Db, grantId: string, reason: string, now: number): Promise<void> {
  await db
    .updateTable('oauth_grants')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', '=', grantId)
    .where('revoked_at', 'is', null)
    .execute();
  await db
    .updateTable('oauth_tokens')
    .set({ revoked_at: now })
    .where('grant_id', '=', grantId)
    .where('revoked_at', 'is', null)
    .execute();
  await db
    .updateTable('oauth_codes')
    .set({ consumed_at: now })
    .where('grant_id', '=', grantId)
    .where('consumed_at', 'is', null)
    .execute();
}

/** Ends a grant and everything issued from it; a key the approval minted is revoked too (nobody else holds it). */
export async function revokeGrant(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  grantId: string,
  reason: string,
): Promise<void> {
  const now = ctx.clock.now();
  const grant = await ctx.db.transaction().execute(async (trx) => {
    await _revokeFamily(trx, grantId, reason, now);
    return trx
      .selectFrom('oauth_grants')
      .select(['org_id', 'key_id', 'key_minted'])
      .where('id', '=', grantId)
      .executeTakeFirstOrThrow();
  });
  if (grant.key_minted === 1) await revokeKey(ctx.db, grant.org_id, grant.key_id, now);
}
