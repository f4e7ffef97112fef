/**
 * Direct access to a test data dir's SQLite file, for arranging state the test is not about
 * (an org with a session, a key with scopes, credits) and for asserting ledger state afterwards.
 */
import { join } from 'node:path';
import { openDatabase, type DbHandles } from '../../control/db/database.js';
import { newId } from '../../control/lib/ids.js';
import { mintApiKey, mintSessionToken } from '../../control/keys/key-format.js';
import { ALL_SCOPES, formatScopes, type Scope } from '../../control/auth/scopes.js';
import { postEntry, checkLedgerConsistency } from '../../control/ledger/ledger.service.js';

export function openTestDb(dataDir: string): DbHandles {
  return openDatabase(join(dataDir, 'svc.db'));
}

export interface SeededOrg {
  orgId: string;
  userId: string;
  email: string;
  /** `sess_…` plaintext for an owner session. */
  session: string;
  /** `svc_live_…` plaintext with all scopes. */
  key: string;
  keyId: string;
}

export async function seedOrg(h: DbHandles, opts: { email?: string; role?: 'owner' | 'admin'; scopes?: Scope[] } = {}): Promise<SeededOrg> {
  const now = Date.now();
  const orgId = newId('org');
  const userId = newId('usr');
  const email = opts.email ?? `${userId}@example.test`;
  await h.db.insertInto('orgs').values({ id: orgId, name: email, origin: 'admin', status_reason: null, email, email_verified_at: now, created_at: now }).execute();
  await h.db.insertInto('users').values({ id: userId, org_id: orgId, email, name: null, role: opts.role ?? 'owner', email_verified_at: now, created_at: now, last_login_at: null }).execute();
  await h.db.insertInto('balances').values({ org_id: orgId, updated_at: now }).execute();
  const sess = mintSessionToken();
  await h.db.insertInto('sessions').values({ id: newId('ses'), org_id: orgId, user_id: userId, token_hash: sess.hash, created_at: now, expires_at: now + 86_400_000, ended_at: null }).execute();
  const { key, keyId } = await seedKey(h, orgId, { scopes: opts.scopes ?? [...ALL_SCOPES], userId });
  return { orgId, userId, email, session: sess.plaintext, key, keyId };
}

export async function seedKey(
  h: DbHandles,
  orgId: string,
  opts: { scopes?: Scope[]; userId?: string; budgetCents?: number; perCallMaxCents?: number; dailyCapCents?: number; approvalMode?: 'auto' | 'free_only' } = {},
): Promise<{ key: string; keyId: string }> {
  const now = Date.now();
  const minted = mintApiKey();
  const keyId = newId('key');
  await h.db
    .insertInto('api_keys')
    .values({
      id: keyId,
      org_id: orgId,
      created_by_user_id: opts.userId ?? null,
      created_by_key_id: null,
      name: 'test key',
      key_hash: minted.hash,
      start: minted.start,
      scopes: formatScopes(opts.scopes ?? [...ALL_SCOPES]),
      origin: 'admin',
      approval_mode: opts.approvalMode ?? 'auto',
      budget_cents: opts.budgetCents ?? null,
      per_call_max_cents: opts.perCallMaxCents ?? null,
      daily_cap_cents: opts.dailyCapCents ?? null,
      rate_limit_per_min: null,
      created_at: now,
      updated_at: now,
      revoked_at: null,
      last_used_at: null,
    })
    .execute();
  return { key: minted.plaintext, keyId };
}

export async function grantCredits(h: DbHandles, orgId: string, cents: number, reason = 'test grant'): Promise<void> {
  await h.db.transaction().execute((trx) =>
    postEntry(trx, { orgId, kind: 'adjustment', amountCents: cents, reason, idempotencyKey: `test:${newId('txn')}` }, Date.now()),
  );
}

export async function expectLedgerConsistent(h: DbHandles): Promise<void> {
  const bad = await checkLedgerConsistency(h.db);
  if (bad.length) throw new Error(`ledger inconsistent: ${JSON.stringify(bad)}`);
}
