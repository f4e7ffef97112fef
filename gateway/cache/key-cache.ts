/**
 * In-memory key and org records for the hot path: looked up by the key's SHA-256, loaded from SQLite on a miss,
 * dropped by the change feed (core/db/change-feed.ts) when the control plane revokes, re-caps or suspends.
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

interface KeyRow {
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
  readonly #keyStmt: Sqlite.Statement<[string], KeyRow>;
  readonly #orgStmt: Sqlite.Statement<[string], { id: string; status: string; email_verified_at: number | null }>;

  constructor(sqlite: Sqlite.Database, max = 100_000) {
    this.#byHash = new LRUCache({ max });
    this.#unknown = new LRUCache({ max: 10_000 });
    this.#keyStmt = sqlite.prepare(
      'SELECT id, org_id, key_hash, scopes, approval_mode, budget_cents, per_call_max_cents, daily_cap_cents, rate_limit_per_min, revoked_at FROM api_keys WHERE key_hash = ?',
    );
    this.#orgStmt = sqlite.prepare('SELECT id, status, email_verified_at FROM orgs WHERE id = ?');
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
    const row = this.#keyStmt.get(hash);
    if (!row) {
      this.#unknown.set(hash, true);
      return undefined;
    }
    const rec: KeyRecord = {
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
    this.#byHash.set(hash, rec);
    return rec;
  }

  org(orgId: string): OrgRecord {
    const hit = this.#orgs.get(orgId);
    if (hit) return hit;
    const row = this.#orgStmt.get(orgId);
    const rec: OrgRecord = {
      orgId,
      suspended: !row || row.status === 'suspended',
      emailVerified: !!row?.email_verified_at,
    };
    this.#orgs.set(orgId, rec);
    return rec;
  }

  dropKey(keyId: string): void {
    const hashes: string[] = [];
    for (const [hash, rec] of this.#byHash.entries()) if (rec.keyId === keyId) hashes.push(hash);
    for (const h of hashes) this.#byHash.delete(h);
  }

  dropOrg(orgId: string): void {
    this.#orgs.delete(orgId);
  }

  clearUnknown(): void {
    this.#unknown.clear();
  }

  clear(): void {
    this.#byHash.clear();
    this.#unknown.clear();
    this.#orgs.clear();
  }
}
