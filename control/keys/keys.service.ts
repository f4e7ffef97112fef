/**
 * API keys: mint (plaintext shown once, sha256 stored), list, patch caps, revoke. A key never grants scopes
 * its creator lacks, nor raises caps when it is capped itself (key-permissions.ts). Every change is announced on the change feed so gateways drop their cached copy.
 */
import type { Db, Row } from '../../core/db/database.js';
import { recordChange } from '../../core/db/changes.js';
import { SvcError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { pageOf, type Page } from '../lib/pagination.js';
import { formatScopes, parseScopes, type Scope } from '../../core/scopes.js';
import { assertScope, type Principal } from '../auth/principal.js';
import { mintApiKey } from '../../core/key-format.js';
import type { CreateKeyInput, KeyCaps, KeyResource, PatchKeyInput } from '../../core/schemas/keys.schemas.js';
import { assertMayManage, assertNoRaise, childCaps, isConstrained } from './key-permissions.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The only way a key row leaves the service: no hash, ever.
 * @public A serialiser: the key hash never leaves.
 */
export function toKeyResource(row: Row<'api_keys'>): KeyResource {
  return {
    id: row.id,
    object: 'api_key',
    name: row.name,
    start: row.start,
    scopes: parseScopes(row.scopes),
    approval_mode: row.approval_mode,
    budget_cents: row.budget_cents,
    per_call_max_cents: row.per_call_max_cents,
    daily_cap_cents: row.daily_cap_cents,
    rate_limit_per_min: row.rate_limit_per_min,
    spent_cents: row.spent_cents,
    origin: row.origin,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    revoked_at: iso(row.revoked_at),
    last_used_at: iso(row.last_used_at),
  };
}

export interface InsertKeyInput extends KeyCaps {
  orgId: string;
  name: string;
  scopes: readonly Scope[];
  origin: Row<'api_keys'>['origin'];
  createdByUserId?: string | null;
  createdByKeyId?: string | null;
}

/** @internal Writes a key row inside a caller that decided already (createKeyFor, registration, OAuth approval). */
export async function insertKey(
  db: Db,
  input: InsertKeyInput,
  now: number,
): Promise<{ row: Row<'api_keys'>; plaintext: string }> {
  const minted = mintApiKey();
  const row: Row<'api_keys'> = {
    id: newId('key', now),
    org_id: input.orgId,
    created_by_user_id: input.createdByUserId ?? null,
    created_by_key_id: input.createdByKeyId ?? null,
    name: input.name,
    key_hash: minted.hash,
    start: minted.start,
    scopes: formatScopes(input.scopes),
    origin: input.origin,
    approval_mode: input.approval_mode ?? 'auto',
    budget_cents: input.budget_cents ?? null,
    per_call_max_cents: input.per_call_max_cents ?? null,
    daily_cap_cents: input.daily_cap_cents ?? null,
    rate_limit_per_min: input.rate_limit_per_min ?? null,
    spent_cents: 0,
    created_at: now,
    updated_at: now,
    revoked_at: null,
    last_used_at: null,
  };
  await db.insertInto('api_keys').values(row).execute();
  return { row, plaintext: minted.plaintext };
}

/**
 * A new key of the creator's org. Without `scopes` it gets the creator's scopes minus `keys:write` (an agent's key
 * should not mint keys unless asked for). A constrained creator's caps bound the new key's (key-permissions.ts).
 */
export async function createKeyFor(
  db: Db,
  caller: Principal | undefined,
  input: CreateKeyInput,
  now: number,
): Promise<{ resource: KeyResource; plaintext: string }> {
  const creator = assertScope(caller, 'keys:write');
  const scopes = input.scopes ?? [...creator.scopes].filter((s) => s !== 'keys:write');
  const excess = scopes.filter((s) => !creator.scopes.has(s));
  if (excess.length) {
    throw new SvcError('insufficient_scope', `A key cannot grant scopes its creator lacks: ${excess.join(', ')}`, {
      extra: { missing_scopes: excess },
    });
  }
  return db.transaction().execute(async (trx) => {
    const own = await _principalKey(trx, creator);
    let caps: KeyCaps = input;
    if (own && isConstrained(own)) {
      const bounded = childCaps(own, input);
      caps = bounded.caps;
      if (Object.keys(bounded.carve).length) {
        await trx
          .updateTable('api_keys')
          .set({ ...bounded.carve, updated_at: now })
          .where('id', '=', own.id)
          .execute();
        await recordChange(trx, 'key', own.id, now);
      }
    }
    const { row, plaintext } = await insertKey(
      trx,
      {
        ...caps,
        name: input.name,
        orgId: creator.orgId,
        scopes,
        origin: 'created',
        createdByUserId: creator.userId,
        createdByKeyId: creator.keyId,
      },
      now,
    );
    return { resource: toKeyResource(row), plaintext };
  });
}

/** The calling key's row (read inside the caller's transaction), or undefined for a session. */
async function _principalKey(db: Db, p: Principal): Promise<Row<'api_keys'> | undefined> {
  if (p.kind !== 'key' || !p.keyId) return undefined;
  return orgKey(db, p.orgId, p.keyId);
}

/** Newest first, one page (pagination.ts rules). */
export async function listKeys(
  db: Db,
  caller: Principal | undefined,
  limit: number,
  offset: number,
): Promise<Page<KeyResource>> {
  const { orgId } = assertScope(caller, 'keys:write');
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .offset(offset)
    .execute();
  return pageOf(rows.map(toKeyResource), limit, offset);
}

async function orgKey(db: Db, orgId: string, keyId: string): Promise<Row<'api_keys'>> {
  const row = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', keyId)
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  if (!row) throw new SvcError('not_found', `No key ${keyId} in this org`);
  return row;
}

export async function patchKey(
  db: Db,
  caller: Principal | undefined,
  keyId: string,
  patch: PatchKeyInput,
  now: number,
): Promise<KeyResource> {
  const principal = assertScope(caller, 'keys:write');
  const orgId = principal.orgId;
  return db.transaction().execute(async (trx) => {
    const row = await orgKey(trx, orgId, keyId);
    if (row.revoked_at !== null) throw new SvcError('invalid_state', 'A revoked key cannot be changed');
    const own = await _principalKey(trx, principal);
    assertMayManage(principal, own, row);
    if (own && isConstrained(own)) assertNoRaise(row, patch);
    const set: Partial<Row<'api_keys'>> = { updated_at: now };
    for (const f of [
      'name',
      'budget_cents',
      'per_call_max_cents',
      'daily_cap_cents',
      'approval_mode',
      'rate_limit_per_min',
    ] as const) {
      if (patch[f] !== undefined) (set as Record<string, unknown>)[f] = patch[f];
    }
    await trx.updateTable('api_keys').set(set).where('id', '=', keyId).execute();
    await recordChange(trx, 'key', keyId, now);
    return toKeyResource(await orgKey(trx, orgId, keyId));
  });
}

/** Idempotent: revoking a revoked key returns it unchanged. */
export async function revokeKey(
  db: Db,
  caller: Principal | undefined,
  keyId: string,
  now: number,
): Promise<KeyResource> {
  const principal = assertScope(caller, 'keys:write');
  const orgId = principal.orgId;
  return db.transaction().execute(async (trx) => {
    const row = await orgKey(trx, orgId, keyId);
    assertMayManage(principal, await _principalKey(trx, principal), row);
    await markKeyRevoked(trx, keyId, now);
    return toKeyResource(await orgKey(trx, orgId, keyId));
  });
}

/**
 * Revokes a key (once) and tells the gateways, inside the caller's transaction. No permission check: for callers
 * that decided already (revokeKey above; the end of an OAuth grant whose approval minted the key).
 * @internal Inside a caller that decided already (revokeKey, the end of an OAuth grant).
 */
export async function markKeyRevoked(trx: Db, keyId: string, now: number): Promise<void> {
  const r = await trx
    .updateTable('api_keys')
    .set({ revoked_at: now, updated_at: now })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (r.numUpdatedRows > 0n) await recordChange(trx, 'key', keyId, now);
}
