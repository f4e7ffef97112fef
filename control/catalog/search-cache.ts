/**
 * Per-process cache of search results and the category list. An entry is valid while `search_version` (migration
 * 0010) holds the value read before it was computed: triggers move that counter on every write that can change a
 * result (a listing's text, endpoints, visibility, price or stats), in any process, so a hit is never stale.
 * On PostgreSQL there is no such counter: searches are not cached there.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { dialectOf } from '../../core/db/dialect.js';

/** Enough for the landing page, every category and the popular queries; old entries go first. */
const MAX_ENTRIES = 500;

const caches = new WeakMap<Db, Map<string, { version: number; value: unknown }>>();

async function searchVersion(db: Db): Promise<number> {
  const row = (await sql<{ n: number }>`SELECT n FROM search_version WHERE id = 1`.execute(db)).rows[0];
  return Number(row?.n ?? 0);
}

/** `compute()`'s value for `key`, computed again only after a search-relevant write. */
export async function cachedSearch<T>(db: Db, key: string, compute: () => Promise<T>): Promise<T> {
  // PostgreSQL has no search_version triggers (pg/0001_baseline): every search reads the database.
  if (dialectOf(db) === 'postgres') return compute();
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  // Read the version first: a write landing during compute() then invalidates this entry instead of hiding.
  const version = await searchVersion(db);
  const hit = cache.get(key);
  if (hit && hit.version === version) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.value as T;
  }
  const value = await compute();
  cache.delete(key);
  cache.set(key, { version, value });
  if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  return value;
}
