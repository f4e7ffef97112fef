/**
 * Grants: a person's approval lets a client act as one full-scope key of their org on the MCP resource. Approval
 * mints that key (origin `oauth`, revoked with the grant) and a one-time code; revoking a grant ends every code and
 * token of its family (RFC 7009, refresh-token reuse, authorization-code reuse).
 */
import type { AppContext } from '../context.js';
import type { Db } from '../../core/db/database.js';
import { newId } from '../../core/ids.js';
import { encryptSecret } from '../../core/crypto.js';
import { ALL_SCOPES, formatScopes } from '../../core/scopes.js';
import { insertKey, markKeyRevoked } from '../keys/keys.service.js';
import { CODE_TTL_MS } from './oauth-settings.js';
import { mintAuthorizationCode } from './token-format.js';
import { redirectWith, type AuthorizationRequest } from './authorization-request.js';
import { consumeStepUp } from './step-up.js';
import { SvcError } from '../../core/errors.js';
import { applyEmailVerification } from '../orgs/orgs.service.js';
import { assertPerson, type Principal } from '../auth/principal.js';

function keyName(req: AuthorizationRequest): string {
  const label = req.client.clientName ?? (new URL(req.redirectUri).host || req.client.clientId);
  return `OAuth: ${label}`.slice(0, 64);
}

interface GrantRow {
  orgId: string;
  userId: string;
  keyId: string;
  keyMinted: 0 | 1;
  keySecret: string;
}

/** Writes the grant and its one-time code; returns the code's plaintext. */
async function _grantWithCode(db: Db, req: AuthorizationRequest, g: GrantRow, now: number): Promise<string> {
  const code = mintAuthorizationCode();
  const grantId = newId('ogr', now);
  await db
    .insertInto('oauth_grants')
    .values({
      id: grantId,
      client_id: req.client.clientId,
      org_id: g.orgId,
      user_id: g.userId,
      key_id: g.keyId,
      key_minted: g.keyMinted,
      key_secret: g.keySecret,
      resource: req.resource,
      scope: formatScopes(ALL_SCOPES),
      created_at: now,
      revoked_at: null,
      revoked_reason: null,
    })
    .execute();
  await db
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
  return code.plaintext;
}

/** Records the approval and answers with the client's redirect carrying a one-time code. */
export async function approveAuthorization(
  ctx: Pick<AppContext, 'db' | 'clock' | 'secretKey'>,
  req: AuthorizationRequest,
  caller: Principal | undefined,
  issuer: string,
): Promise<string> {
  const approver = assertPerson(caller);
  const now = ctx.clock.now();
  const code = await ctx.db.transaction().execute(async (trx) => {
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
    return _grantWithCode(
      trx,
      req,
      {
        orgId: approver.orgId,
        userId: approver.userId,
        keyId: key.id,
        keyMinted: 1,
        keySecret: encryptSecret(ctx.secretKey, plaintext),
      },
      now,
    );
  });
  return redirectWith(req.redirectUri, { code }, req.state, issuer);
}

/**
 * Approval of a step-up request by a person who just proved `email` with a login code: the email is verified for
 * the registered key's org (the same function as POST /v1/auth/verify-email: owner user, withheld credit, the org's
 * registered keys elevated), and the grant acts as that same key. `conflict` when the email has another account.
 * @public Its credential is the one-time step-up handle it consumes, proved by a login code for the email.
 */
export async function elevateAndApprove(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  req: AuthorizationRequest & { stepUp: NonNullable<AuthorizationRequest['stepUp']> },
  email: string,
  issuer: string,
): Promise<string> {
  const now = ctx.clock.now();
  const { stepUp } = req;
  const code = await ctx.db.transaction().execute(async (trx) => {
    if (!(await consumeStepUp(trx, stepUp.handleHash, now)))
      throw new SvcError('invalid_state', 'This upgrade request was already used: connect the application again');
    const verified = await applyEmailVerification(trx, { orgId: stepUp.orgId, userId: null, email }, now);
    return _grantWithCode(
      trx,
      req,
      { orgId: stepUp.orgId, userId: verified.userId, keyId: stepUp.keyId, keyMinted: 0, keySecret: stepUp.keySecret },
      now,
    );
  });
  return redirectWith(req.redirectUri, { code }, req.state, issuer);
}

/** @public Changes nothing: the client's redirect with access_denied. */
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

/**
 * Ends a grant and everything issued from it; a key the approval minted is revoked too (nobody else holds it).
 * @internal Inside token revocation and reuse detection (tokens.service.ts).
 */
export async function revokeGrant(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  grantId: string,
  reason: string,
): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.transaction().execute(async (trx) => {
    await _revokeFamily(trx, grantId, reason, now);
    const grant = await trx
      .selectFrom('oauth_grants')
      .select(['key_id', 'key_minted'])
      .where('id', '=', grantId)
      .executeTakeFirstOrThrow();
    if (grant.key_minted === 1) await markKeyRevoked(trx, grant.key_id, now);
  });
}
