/**
 * Step-up from a registered (consumer-scoped) key to full scope through OAuth, keeping the same key (spec §3: OAuth
 * approval on MCP elevates the key). The MCP server answers a bare key's billing or provider tool call with 403
 * `insufficient_scope` and a `scope` that carries a one-time handle, `svc_key:<handle>`; the client copies that scope
 * into its authorization request, and the page then lets the person verify an email for the key's org.
 */
import type { AppContext } from '../context.js';
import type { Db } from '../../core/db/database.js';
import { encryptSecret, sha256Hex } from '../../core/crypto.js';
import { randomString } from '../../core/ids.js';
import { VERIFIED_EXTRA_SCOPES } from '../../core/scopes.js';

export const STEP_UP_SCOPE_PREFIX = 'svc_key:';
export const STEP_UP_TTL_MS = 10 * 60_000;
const HANDLE_RE = /^svc_key:[0-9A-Za-z]{32}$/;

export function isStepUpScope(scope: string): boolean {
  return HANDLE_RE.test(scope);
}

/** The registered key a valid step-up handle points at. */
export interface StepUp {
  handleHash: string;
  keyId: string;
  keyStart: string;
  orgId: string;
  orgName: string;
  keySecret: string;
}

/** A key svc can elevate by email: from anonymous registration, unrevoked, in an org without a verified email. */
async function _elevatable(db: Db, keyId: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('orgs', 'orgs.id', 'api_keys.org_id')
    .select(['api_keys.id', 'api_keys.start', 'api_keys.org_id', 'orgs.name as org_name'])
    .where('api_keys.id', '=', keyId)
    .where('api_keys.origin', '=', 'register')
    .where('api_keys.revoked_at', 'is', null)
    .where('orgs.email_verified_at', 'is', null)
    .where('orgs.status', '=', 'active')
    .executeTakeFirst();
}

/**
 * For the MCP server's 403: the scope a client should ask for. For an elevatable key it includes a fresh handle
 * (one use, 10 minutes, stored hashed with the key sealed under the secret key); otherwise just the missing scopes.
 */
export async function stepUpScope(
  ctx: Pick<AppContext, 'db' | 'clock' | 'secretKey'>,
  key: { keyId: string; plaintext: string },
): Promise<string> {
  const scopes = VERIFIED_EXTRA_SCOPES.join(' ');
  if (!(await _elevatable(ctx.db, key.keyId))) return scopes;
  const now = ctx.clock.now();
  const handle = STEP_UP_SCOPE_PREFIX + randomString(32);
  await ctx.db
    .insertInto('oauth_step_ups')
    .values({
      handle_hash: sha256Hex(handle),
      key_id: key.keyId,
      key_secret: encryptSecret(ctx.secretKey, key.plaintext),
      created_at: now,
      expires_at: now + STEP_UP_TTL_MS,
      consumed_at: null,
    })
    .execute();
  return `${scopes} ${handle}`;
}

/** The step-up a request's scope names, if its handle is unused, unexpired and its key still elevatable. */
export async function findStepUp(db: Db, scopes: readonly string[], now: number): Promise<StepUp | undefined> {
  const handle = scopes.find(isStepUpScope);
  if (!handle) return undefined;
  const row = await db
    .selectFrom('oauth_step_ups')
    .selectAll()
    .where('handle_hash', '=', sha256Hex(handle))
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (!row) return undefined;
  const key = await _elevatable(db, row.key_id);
  if (!key) return undefined;
  return {
    handleHash: row.handle_hash,
    keyId: key.id,
    keyStart: key.start,
    orgId: key.org_id,
    orgName: key.org_name,
    keySecret: row.key_secret,
  };
}

/** Spends the handle inside the approval's transaction; false when another approval spent it first. */
export async function consumeStepUp(db: Db, handleHash: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('oauth_step_ups')
    .set({ consumed_at: now })
    .where('handle_hash', '=', handleHash)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}
