/**
 * API keys' principals in memory, keyed by the key's SHA-256, so a tools/call does not read the key, its org and
 * its creator through kysely on every request (issue 11 item 7). Invalidated the way the gateway's key cache is:
 * the shared change feed (core/db/change-feed.ts) drops a key on its `key` change (revoke, caps, scope elevation)
 * and every key of an org on its `org` change (suspension), so a revoked key stops working here within the same
 * bound the gateway documents (docs/gateway.md: 1 s; the feed polls every `pollMs`). The creator's role has no
 * change row, so an entry also expires after `ttlMs`. Only successes are cached: an unknown, revoked or suspended
 * key is read again each time (and refused). While the feed has not read successfully for `FEED_LAG_MAX_MS` (its
 * reads fail), entries are not trusted and every key is read again, so the bound holds then too.
 * On PostgreSQL (SVC_DATABASE_URL) the feed is core/db/pg-change-feed.ts (LISTEN/NOTIFY, polled at most 1 s
 * apart) on kysely; `PrincipalCache.open` picks the feed by store.
 */
import Sqlite from '../core/db/sqlite-driver.js';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../control/context.js';
import { principalFromToken, type Principal } from '../control/auth/principal.js';
import { sha256Hex } from '../core/crypto.js';
import { ChangeFeed, type ChangeRow, type ChangeSource } from '../core/db/change-feed.js';
import { kyselyFeedReads, PgChangeFeed } from '../core/db/pg-change-feed.js';

export interface PrincipalCacheOptions {
  /** How often the change feed is polled (the gateway's default, SVC_GATEWAY_POLL_MS, is 100 ms). */
  pollMs?: number;
  max?: number;
  ttlMs?: number;
}

type CacheCtx = Pick<AppContext, 'db' | 'clock' | 'log' | 'config'>;

/** The documented bound (docs/mcp.md): past it without a successful poll, the cache is bypassed. */
const FEED_LAG_MAX_MS = 1_000;

export class PrincipalCache {
  readonly #byHash: LRUCache<string, Principal>;
  #feed!: ChangeSource;
  #closeFeed: () => void = () => {};
  readonly #feedLagMaxMs: number;
  readonly #pollMs: number;

  private constructor(
    private readonly ctx: CacheCtx,
    opts: PrincipalCacheOptions,
  ) {
    this.#byHash = new LRUCache({ max: opts.max ?? 10_000, ttl: opts.ttlMs ?? 30_000 });
    this.#pollMs = opts.pollMs ?? 100;
    this.#feedLagMaxMs = Math.max(FEED_LAG_MAX_MS, 3 * this.#pollMs);
  }

  /** A cache with its change feed running: SQLite's data_version poll, or PostgreSQL's LISTEN/NOTIFY. */
  static async open(ctx: CacheCtx, opts: PrincipalCacheOptions = {}): Promise<PrincipalCache> {
    const c = new PrincipalCache(ctx, opts);
    const onError = (e: unknown) =>
      ctx.log.warn('mcp change feed poll failed; retrying next tick', { err: e as Error });
    const url = ctx.config.databaseUrl;
    if (url) {
      c.#feed = await PgChangeFeed.open(
        kyselyFeedReads(ctx.db),
        url,
        (rows) => c.drop(rows),
        () => {},
        onError,
      );
      c.#closeFeed = () => c.#feed.stop();
    } else {
      // Its own read connection: this process's own writes (revoke_key, an elevation) must move data_version too.
      const feedDb = new Sqlite(ctx.config.dbFile, { readonly: true, fileMustExist: true });
      c.#feed = new ChangeFeed(
        feedDb,
        (rows) => c.drop(rows),
        () => {},
        onError,
      );
      c.#closeFeed = () => {
        c.#feed.stop();
        feedDb.close();
      };
    }
    c.#feed.start(c.#pollMs);
    return c;
  }

  /** The principal of an `svc_live_` key; throws as principalFromToken does (unauthorized, revoked, suspended). */
  async ofApiKey(token: string): Promise<Principal> {
    // A feed that has not read lately may have missed a revocation: read the key instead of trusting memory.
    if (performance.now() - this.#feed.polledAt > this.#feedLagMaxMs) return principalFromToken(this.ctx, token);
    const hash = sha256Hex(token);
    const hit = this.#byHash.get(hash);
    if (hit) return hit;
    const p = await principalFromToken(this.ctx, token);
    this.#byHash.set(hash, p);
    return p;
  }

  /** Reads the key again on its next use (a refusal re-checks before it is given: scopes may just have grown). */
  forget(token: string): void {
    this.#byHash.delete(sha256Hex(token));
  }

  /** Applies change rows: `key` drops that key, `org` every key of that org; other entities do not matter here. */
  drop(rows: readonly ChangeRow[]): void {
    const keys = new Set<string>();
    const orgs = new Set<string>();
    for (const r of rows) {
      if (r.entity === 'key') keys.add(r.entity_id);
      else if (r.entity === 'org') orgs.add(r.entity_id);
    }
    if (keys.size === 0 && orgs.size === 0) return;
    for (const [hash, p] of this.#byHash.entries()) {
      if ((p.keyId !== null && keys.has(p.keyId)) || orgs.has(p.orgId)) this.#byHash.delete(hash);
    }
  }

  close(): void {
    this.#closeFeed();
  }
}
