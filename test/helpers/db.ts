/**
 * Direct access to a test data dir's SQLite file, for arranging state the test is not about
 * (an org with a session, a key with scopes, credits) and for asserting ledger state afterwards.
 */
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openDatabase, openPostgres, type Db, type DbHandles } from '../../core/db/database.js';
import { databaseUrlFor, pgTestMode } from './postgres.js';

/** What the seeding helpers need: a kysely handle on either store (SQLite or PostgreSQL). */
export type StoreDb = { db: Db };
import { newId } from '../../core/ids.js';
import { mintApiKey, mintSessionToken } from '../../core/key-format.js';
import { ALL_SCOPES, formatScopes, type Scope } from '../../core/scopes.js';
import { postEntry } from '../../control/ledger/ledger.service.js';
import { checkBooks } from '../../control/ledger/books.service.js';
import { SettleWriter } from '../../gateway/settle-writer.js';
import { utcDay } from '../../core/clock.js';
import { migrateToLatest } from '../../core/db/migrate.js';
import { tempDataDir } from './processes.js';
import type { UsageCallInput } from '../../core/db/id-nums.js';
import { dialectOf } from '../../core/db/dialect.js';
import { Pg } from '../../gateway/pg/connect.js';
import { PgHolders } from '../../gateway/pg/holders.js';
import { PgLeaseManager } from '../../gateway/pg/leases.js';
import { PgSettleWriter } from '../../gateway/pg/settle-writer.js';
import type { SettleRecord } from '../../gateway/settle-writer.js';

/** The PostgreSQL URL behind a test handle's kysely `db` (openTestDb in the PG pass), for the raw-SQL gateway stores. */
const pgUrlOf = new WeakMap<Db, string>();

/**
 * The data dir's database. In the PostgreSQL pass (vitest.pg.config.ts) `db` is the data dir's PostgreSQL database
 * (the one its processes use) and `sqlite` the unused file: tests that read `sqlite` directly are SQLite-only.
 */
export function openTestDb(dataDir: string): DbHandles {
  const lite = openDatabase(join(dataDir, 'svc.db'));
  if (!pgTestMode()) return lite;
  const pg = openPostgres(databaseUrlFor(dataDir));
  pgUrlOf.set(pg.db, pg.url);
  return {
    db: pg.db,
    sqlite: lite.sqlite,
    async close() {
      await pg.close();
      await lite.close();
    },
  };
}

/** A migrated database in a fresh temp data dir, for tests that use the domain code without a process. */
export async function openMigratedTempDb(): Promise<{ dir: string; h: DbHandles; close(): Promise<void> }> {
  const data = tempDataDir();
  const h = openTestDb(data.dir);
  await migrateToLatest(h.db);
  return {
    dir: data.dir,
    h,
    async close() {
      await h.close();
      data.cleanup();
    },
  };
}

/** A fresh migrated temp database for each test of the file (beforeEach / afterEach), handed to `bind`. */
export function useMigratedTempDb(bind: (d: { dir: string; h: DbHandles }) => void): void {
  let data: Awaited<ReturnType<typeof openMigratedTempDb>> | undefined;
  beforeEach(async () => {
    data = await openMigratedTempDb();
    bind(data);
  });
  afterEach(() => data?.close());
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

export async function seedOrg(
  h: StoreDb,
  opts: { email?: string; role?: 'owner' | 'admin'; scopes?: Scope[] } = {},
): Promise<SeededOrg> {
  const now = Date.now();
  const orgId = newId('org');
  const userId = newId('usr');
  const email = opts.email ?? `${userId}@example.test`;
  await h.db
    .insertInto('orgs')
    .values({
      id: orgId,
      name: email,
      origin: 'admin',
      status_reason: null,
      email,
      email_verified_at: now,
      created_at: now,
    })
    .execute();
  await h.db
    .insertInto('users')
    .values({
      id: userId,
      org_id: orgId,
      email,
      name: null,
      role: opts.role ?? 'owner',
      email_verified_at: now,
      created_at: now,
      last_login_at: null,
    })
    .execute();
  await h.db.insertInto('balances').values({ org_id: orgId, updated_at: now }).execute();
  const sess = mintSessionToken();
  await h.db
    .insertInto('sessions')
    .values({
      id: newId('ses'),
      org_id: orgId,
      user_id: userId,
      token_hash: sess.hash,
      created_at: now,
      expires_at: now + 86_400_000,
      ended_at: null,
    })
    .execute();
  const { key, keyId } = await seedKey(h, orgId, { scopes: opts.scopes ?? [...ALL_SCOPES], userId });
  return { orgId, userId, email, session: sess.plaintext, key, keyId };
}

export async function seedKey(
  h: StoreDb,
  orgId: string,
  opts: {
    scopes?: Scope[];
    userId?: string;
    budgetCents?: number;
    perCallMaxCents?: number;
    dailyCapCents?: number;
    approvalMode?: 'auto' | 'free_only';
  } = {},
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

export async function grantCredits(h: StoreDb, orgId: string, cents: number, reason = 'test grant'): Promise<void> {
  await h.db
    .transaction()
    .execute((trx) =>
      postEntry(
        trx,
        { orgId, kind: 'adjustment', amountCents: cents, reason, idempotencyKey: `test:${newId('txn')}` },
        Date.now(),
      ),
    );
}

/** The whole books (`svc-admin ledger check`): balances = entries, call charges and earnings = usage, payouts booked. */
export async function expectLedgerConsistent(h: StoreDb): Promise<void> {
  const report = await checkBooks(h.db);
  if (!report.ok) throw new Error(`books inconsistent: ${JSON.stringify(report)}`);
}

/** The usage row before 0022_narrow_usage (text ids, keyed by `id`): migration tests write old data with it. */
export type LegacyUsageEventsTable = Omit<UsageCallInput, 'request_id'> & { id: string };

/** `db` typed with the pre-0022 `usage_events` table as well (for databases migrated only that far). */
export function withLegacyUsage(db: Db) {
  return db.withTables<{ usage_events: LegacyUsageEventsTable }>();
}

/**
 * `usage_calls` with its nums turned back into text ids, under the column names callers use (`id` = the request
 * id, `org_id`, `key_id`, …): `db.selectFrom(usageWithIds(db)).where('org_id', '=', …)`. Tests name calls by their ids.
 */
export function usageWithIds(db: Db) {
  return db
    .selectFrom('usage_calls as u')
    .innerJoin('id_nums as o', 'o.num', 'u.org_num')
    .innerJoin('id_nums as k', 'k.num', 'u.key_num')
    .innerJoin('id_nums as a', 'a.num', 'u.api_num')
    .innerJoin('id_nums as e', 'e.num', 'u.endpoint_num')
    .innerJoin('id_nums as p', 'p.num', 'u.provider_num')
    .select([
      'u.request_id as id',
      'o.id as org_id',
      'k.id as key_id',
      'a.id as api_id',
      'e.id as endpoint_id',
      'p.id as provider_org_id',
      'u.method',
      'u.status',
      'u.latency_ms',
      'u.price_cents',
      'u.charged_cents',
      'u.error_code',
      'u.created_at',
    ])
    .as('usage');
}

/** Who a settled call is from and to (ids as the settle writers take them). */
export interface PaidCallParties {
  orgId: string;
  keyId: string;
  apiId: string;
  endpointId: string;
  providerOrgId: string;
}

/** One successful GET charged `cents` (1 unless said), reserved from `leaseId` (null: unleased), as the gateway hands it to a settle writer. */
export function paidCallRecord(
  p: PaidCallParties,
  leaseId: string | null,
  day: number,
  requestId: string,
  at: number,
  cents = 1,
): SettleRecord {
  return {
    requestId,
    ...p,
    method: 'GET',
    status: 200,
    latencyMs: 1,
    priceCents: cents,
    chargedCents: cents,
    errorCode: null,
    createdAt: at,
    leaseId,
    day,
  };
}

/**
 * A paid call's settle exactly as the gateway writes it, for billing tests that need calls to spend credit or earn
 * a provider money without a gateway: usage row, call_charge entry, provider earning, balance. Resolves with the
 * call's request id; rejects ("insufficient unreserved credit") when the payer's unreserved credit is short, writing
 * nothing.
 * - SQLite: gateway/settle-writer.ts's unleased charge (the balance debited with its check, in one transaction).
 * - PostgreSQL (the PG pass): the PostgreSQL gateway's own path, as a holder of its own: a lease of exactly `cents`
 *   (pg/leases.ts: the headroom check against credit and the key's caps), the settle batch (pg/settle-writer.ts),
 *   then the lease released, which folds the spend into `balances` and the key's spend (pg/fold.ts), so what the
 *   control plane reads right after is final, as on SQLite.
 */
export async function chargeLikeGateway(
  h: StoreDb,
  payer: { orgId: string; keyId: string },
  cents: number,
  opts: { providerOrgId?: string; apiId?: string; at?: number; platformFeeBps?: number } = {},
): Promise<string> {
  const at = opts.at ?? Date.now();
  const requestId = newId('req', at);
  const rec = paidCallRecord(
    {
      orgId: payer.orgId,
      keyId: payer.keyId,
      apiId: opts.apiId ?? 'api_simulated',
      endpointId: 'ep_simulated',
      providerOrgId: opts.providerOrgId ?? 'org_simulated_provider',
    },
    null,
    utcDay(at),
    requestId,
    at,
    cents,
  );
  const platformFeeBps = opts.platformFeeBps ?? 0;
  if (dialectOf(h.db) === 'postgres') {
    const url = pgUrlOf.get(h.db);
    if (!url) throw new Error('chargeLikeGateway: a PostgreSQL handle not opened by openTestDb');
    await _chargeOnPostgres(url, rec, platformFeeBps);
    return requestId;
  }
  if (!('sqlite' in h)) throw new Error('chargeLikeGateway: a SQLite handle needs its `sqlite` connection');
  const writer = new SettleWriter((h as DbHandles).sqlite, { holderId: null, platformFeeBps });
  await writer.settle(rec);
  return requestId;
}

async function _chargeOnPostgres(url: string, rec: SettleRecord, platformFeeBps: number): Promise<void> {
  const pg = new Pg(url, { max: 2, application: 'svc-test-charge' });
  try {
    const now = Date.now();
    const holders = await PgHolders.register(pg, now);
    try {
      const leases = new PgLeaseManager(pg, holders.id, {
        liveHolders: () => 1,
        maxChunkCents: rec.chargedCents,
        idleMs: 60_000,
      });
      const key = {
        keyId: rec.keyId,
        keyHash: '',
        orgId: rec.orgId,
        canCall: true,
        revoked: false,
        freeOnly: false,
        budgetCents: null,
        perCallMaxCents: null,
        dailyCapCents: null,
        rateLimitPerMin: null,
      };
      const got = await leases.reserve(key, rec.day, rec.chargedCents, now);
      if (!got.ok) throw new Error(`insufficient unreserved credit for this charge (${got.code})`);
      try {
        const writer = new PgSettleWriter(pg, { holderId: holders.id, platformFeeBps, flushMs: 0 });
        await writer.settle({ ...rec, leaseId: got.lease.id });
        leases.committed(got.lease.id, rec.chargedCents);
      } finally {
        await leases.releaseAll(Date.now());
      }
    } finally {
      await holders.markStopped();
    }
  } finally {
    await pg.end();
  }
}

export interface SeedEndpoint {
  method: string;
  path: string;
  priceCents: number;
  discounts?: { min_calls: number; percent_off: number }[];
}

/**
 * A listing straight into the DB (for gateway and bench tests that are not about publishing).
 * `secret` is encrypted with the data dir's key exactly as the provider routes do.
 */
export async function seedListing(
  h: StoreDb,
  opts: {
    orgId: string;
    slug: string;
    baseUrl: string;
    endpoints: SeedEndpoint[];
    status?: 'draft' | 'live';
    injection?: 'none' | 'bearer' | 'header' | 'query';
    injectionName?: string;
    secret?: string;
    secretKey?: Buffer;
  },
): Promise<{ apiId: string; endpointIds: string[] }> {
  const { encryptSecret, fingerprint } = await import('../../core/crypto.js');
  const now = Date.now();
  const apiId = newId('api');
  if (opts.secret && !opts.secretKey)
    throw new Error('seedListing: secret needs secretKey (loadSecretKey of the data dir)');
  await h.db
    .insertInto('apis')
    .values({
      id: apiId,
      org_id: opts.orgId,
      slug: opts.slug,
      name: opts.slug,
      base_url: opts.baseUrl,
      docs_url: null,
      logo_url: null,
      health_path: null,
      status: opts.status ?? 'live',
      suspended_at: null,
      suspended_reason: null,
      source_kind: 'body',
      source_url: null,
      openapi_json: null,
      secret_enc: opts.secret ? encryptSecret(opts.secretKey!, opts.secret) : null,
      secret_fingerprint: opts.secret ? fingerprint(opts.secret) : null,
      injection: opts.injection ?? 'none',
      injection_name: opts.injectionName ?? null,
      published_at: (opts.status ?? 'live') === 'live' ? now : null,
      publish_terms_accepted_at: now,
      last_verified_at: null,
      last_verify_ok: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const endpointIds: string[] = [];
  for (const [i, ep] of opts.endpoints.entries()) {
    const id = newId('ep');
    endpointIds.push(id);
    await h.db
      .insertInto('endpoints')
      .values({
        id,
        api_id: apiId,
        method: ep.method.toUpperCase(),
        path: ep.path,
        operation_id: null,
        request_schema_json: null,
        response_schema_json: null,
        price_cents: ep.priceCents,
        discounts_json: JSON.stringify(ep.discounts ?? []),
        position: i,
        removed_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  return { apiId, endpointIds };
}
