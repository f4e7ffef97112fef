/**
 * In-memory key and org records for the hot path: looked up by the key's SHA-256, loaded on a miss, dropped by
 * the change feed (core/db/change-feed.ts, gateway/pg/change-feed.ts) when the control plane revokes, re-caps or
 * suspends. On SQLite a miss loads synchronously inside `byHash`. On PostgreSQL (an `AsyncKeySource`,
 * gateway/pg/lookups.ts) a miss is an awaited round trip: the pipeline awaits `warm(hash)` first (null when
 * everything is cached, the common case: no promise, no microtask), then `byHash` answers from memory.
 */
import type Sqlite from 'better-sqlite3';
import { LRUCache } from 'lru-cache';

export interface KeyRecord {
  keyId: string;
  keyHash: string;
  orgId: string;
  canCall: boolean;
  revoked: boolean;
  freeOnly: boolean;
  budgetCents: number | null;
  perCallMaxCents: number | null;
  dailyCapCents: number | null;
  rateLimitPerMin: number | null;
}

export interface OrgRecord {
  orgId: string;
  suspended: boolean;
  emailVerified: boolean;
}

export interface KeyRow {
  id: string;
  org_id: string;
  key_hash: string;
  scopes: string;
  approval_mode: string;
  budget_cents: number | null;
  per_call_max_cents: number | null;
  daily_cap_cents: number | null;
  rate_limit_per_min: number | null;
  revoked_at: number | null;
}

export interface OrgRow {
  id: string;
  status: string;
  email_verified_at: number | null;
}

/** Where a PostgreSQL gateway loads keys and orgs from on a miss (gateway/pg/lookups.ts). */
export interface AsyncKeySource {
  key(hash: string): Promise<KeyRow | undefined>;
  org(orgId: string): Promise<OrgRow | undefined>;
}

/** `warm` answered but the record is not cached (a change arrived during every load): the caller gives up. */
export class NotCachedError extends Error {}

function isAsyncSource(s: Sqlite.Database | AsyncKeySource): s is AsyncKeySource {
  return typeof (s as AsyncKeySource).key === 'function' && typeof (s as AsyncKeySource).org === 'function';
}

/**
 * Unknown hashes are cached negatively too (the 401 path must not read the DB per request); that set is cleared
 * whenever a row is added to api_keys (the feed watches max(rowid)), so a new key works at once.
 */
export class KeyCache {
  /** Lookups answered from memory, and those that went to the database (gateway metrics). */
  hits = 0;
  misses = 0;
  readonly #byHash: LRUCache<string, KeyRecord>;
  readonly #unknown: LRUCache<string, true>;
  readonly #orgs = new Map<string, OrgRecord>();
  readonly #keyStmt: Sqlite.Statement<[string], KeyRow> | null = null;
  readonly #orgStmt: Sqlite.Statement<[string], OrgRow> | null = null;
  readonly #source: AsyncKeySource | null = null;
  /** Loads in flight (PostgreSQL), by hash and by org id: concurrent misses share one round trip. */
  readonly #loading = new Map<string, Promise<void>>();
  /** Moved by every drop: a load that started before a drop must not cache what it read (it may be stale). */
  #gen = 0;

  constructor(source: Sqlite.Database | AsyncKeySource, max = 100_000) {
    this.#byHash = new LRUCache({ max });
    this.#unknown = new LRUCache({ max: 10_000 });
    if (isAsyncSource(source)) {
      this.#source = source;
      return;
    }
    this.#keyStmt = source.prepare(
      'SELECT id, org_id, key_hash, scopes, approval_mode, budget_cents, per_call_max_cents, daily_cap_cents, rate_limit_per_min, revoked_at FROM api_keys WHERE key_hash = ?',
    );
    this.#orgStmt = source.prepare('SELECT id, status, email_verified_at FROM orgs WHERE id = ?');
  }

  /** True when misses load asynchronously (PostgreSQL): callers await `warm` before `byHash`. */
  get async(): boolean {
    return this.#source !== null;
  }

  /**
   * Null when `byHash(hash)` (and `org` of its key) can answer now; otherwise a load to await, after which the
   * caller asks again (a change that arrived meanwhile makes the load not cache, so the next `warm` reloads).
   */
  warm(hash: string): Promise<void> | null {
    const src = this.#source;
    if (!src) return null;
    const hit = this.#byHash.get(hash);
    if (hit) return this.#orgs.has(hit.orgId) ? null : this.#warmOrg(hit.orgId);
    if (this.#unknown.has(hash)) return null;
    const busy = this.#loading.get(`k:${hash}`);
    if (busy) return busy;
    this.misses++;
    const gen = this.#gen;
    const p = src.key(hash).then(async (row) => {
      if (gen !== this.#gen) return;
      if (!row) {
        this.#unknown.set(hash, true);
        return;
      }
      const rec = toRecord(row);
      this.#byHash.set(hash, rec);
      if (!this.#orgs.has(rec.orgId)) await this.#warmOrg(rec.orgId);
    });
    return this.#track(`k:${hash}`, p);
  }

  #warmOrg(orgId: string): Promise<void> {
    const busy = this.#loading.get(`o:${orgId}`);
    if (busy) return busy;
    const gen = this.#gen;
    const p = this.#source!.org(orgId).then((row) => {
      if (gen === this.#gen) this.#orgs.set(orgId, toOrg(orgId, row));
    });
    return this.#track(`o:${orgId}`, p);
  }

  #track(k: string, p: Promise<void>): Promise<void> {
    this.#loading.set(k, p);
    const done = () => {
      if (this.#loading.get(k) === p) this.#loading.delete(k);
    };
    p.then(done, done);
    return p;
  }

  /** The record for a key hash, or undefined when no such key exists. */
  byHash(hash: string): KeyRecord | undefined {
    const hit = this.#byHash.get(hash);
    if (hit) {
      this.hits++;
      return hit;
    }
    this.misses++;
    if (this.#unknown.has(hash)) return undefined;
    if (!this.#keyStmt) throw new NotCachedError('key not loaded (warm it first)');
    const row = this.#keyStmt.get(hash);
    if (!row) {
      this.#unknown.set(hash, true);
      return undefined;
    }
    const rec = toRecord(row);
    this.#byHash.set(hash, rec);
    return rec;
  }

  org(orgId: string): OrgRecord {
    const hit = this.#orgs.get(orgId);
    if (hit) return hit;
    if (!this.#orgStmt) throw new NotCachedError('org not loaded (warm its key first)');
    const rec = toOrg(orgId, this.#orgStmt.get(orgId));
    this.#orgs.set(orgId, rec);
    return rec;
  }

  dropKey(keyId: string): void {
    this.#gen++;
    const hashes: string[] = [];
    for (const [hash, rec] of this.#byHash.entries()) if (rec.keyId === keyId) hashes.push(hash);
    for (const h of hashes) this.#byHash.delete(h);
  }

  dropOrg(orgId: string): void {
    this.#gen++;
    this.#orgs.delete(orgId);
  }

  clearUnknown(): void {
    this.#gen++;
    this.#unknown.clear();
  }

  clear(): void {
    this.#gen++;
    this.#byHash.clear();
    this.#unknown.clear();
    this.#orgs.clear();
  }
}

function toRecord(row: KeyRow): KeyRecord {
  return {
    keyId: row.id,
    keyHash: row.key_hash,
    orgId: row.org_id,
    canCall: row.scopes.split(' ').includes('proxy:call'),
    revoked: row.revoked_at !== null,
    freeOnly: row.approval_mode === 'free_only',
    budgetCents: row.budget_cents,
    perCallMaxCents: row.per_call_max_cents,
    dailyCapCents: row.daily_cap_cents,
    rateLimitPerMin: row.rate_limit_per_min,
  };
}

function toOrg(orgId: string, row: OrgRow | undefined): OrgRecord {
  return { orgId, suspended: !row || row.status === 'suspended', emailVerified: !!row?.email_verified_at };
}
