/**
 * API keys' principals in memory, keyed by the key's SHA-256, so a tools/call does not read the key, its org and
 * its creator through kysely on every request (issue 11 item 7). Invalidated the way the gateway's key cache is:
 * the shared change feed (core/db/change-feed.ts) drops a key on its `key` change (revoke, caps, scope elevation)
 * and every key of an org on its `org` change (suspension), so a revoked key stops working here within the same
 * bound the gateway documents (docs/gateway.md: 1 s; the feed polls every `pollMs`). The creator's role has no
 * change row, so an entry also expires after `ttlMs`. Only successes are cached: an unknown, revoked or suspended
 * key is read again each time (and refused). While the feed has not read successfully for `FEED_LAG_MAX_MS` (its
 * reads fail), entries are not trusted and every key is read again, so the bound holds then too.
 *
 * The feed is the store's own: on SQLite the `data_version` poll of core/db/change-feed.ts over a read connection
 * of its own; on PostgreSQL (SVC_DATABASE_URL) the gateway's `LISTEN svc_changes` feed with its 1 s polling
 * fallback (gateway/pg/change-feed.ts) on a one-connection pool. The PostgreSQL feed opens asynchronously (and again
 * after a failed open, every second): until it has read once, no entry is trusted, so every key is read.
 */
import Sqlite from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../control/context.js';
import { principalFromToken, type Principal } from '../control/auth/principal.js';
import { sha256Hex } from '../core/crypto.js';
import { ChangeFeed, type ChangeRow } from '../core/db/change-feed.js';
import { Pg } from '../gateway/pg/connect.js';
import { PgChangeFeed } from '../gateway/pg/change-feed.js';

/** What the cache needs of a change feed: when it last read successfully, and a way to stop it. */
interface Feed {
  readonly polledAt: number;
  stop(): void;
}

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
  #feed: Feed | null = null;
  readonly #release: () => Promise<void>;
  readonly #feedLagMaxMs: number;
  #closed = false;

  constructor(
    private readonly ctx: CacheCtx,
    opts: PrincipalCacheOptions = {},
  ) {
    this.#byHash = new LRUCache({ max: opts.max ?? 10_000, ttl: opts.ttlMs ?? 30_000 });
    const pollMs = opts.pollMs ?? 100;
    this.#feedLagMaxMs = Math.max(FEED_LAG_MAX_MS, 3 * pollMs);
    const onError = (e: unknown) =>
      ctx.log.warn('mcp change feed poll failed; retrying next tick', { err: e as Error });
    const url = ctx.config.databaseUrl;
    if (url) {
      const pg = new Pg(url, { max: 1, application: 'svc-mcp-feed' });
      this.#release = () => pg.end().catch(() => {});
      void this.#openPgFeed(pg, url, pollMs, onError);
      return;
    }
    // Its own read connection: this process's own writes (revoke_key, an elevation) must move data_version too.
    const feedDb = new Sqlite(ctx.config.dbFile, { readonly: true, fileMustExist: true });
    const feed = new ChangeFeed(
      feedDb,
      (rows) => this.drop(rows),
      () => {},
      onError,
    );
    feed.start(pollMs);
    this.#feed = feed;
    this.#release = async () => {
      feedDb.close();
    };
  }

  async #openPgFeed(pg: Pg, url: string, pollMs: number, onError: (e: unknown) => void): Promise<void> {
    while (!this.#closed) {
      try {
        const feed = await PgChangeFeed.open(
          pg,
          url,
          (rows) => this.drop(rows),
          () => {},
          onError,
        );
        if (this.#closed) return;
        feed.start(pollMs);
        this.#feed = feed;
        return;
      } catch (e) {
        onError(e);
        await new Promise((r) => setTimeout(r, 1_000).unref());
      }
    }
  }

  /** The principal of an `svc_live_` key; throws as principalFromToken does (unauthorized, revoked, suspended). */
  async ofApiKey(token: string): Promise<Principal> {
    // A feed that has not read lately may have missed a revocation: read the key instead of trusting memory.
    const feed = this.#feed;
    if (!feed || performance.now() - feed.polledAt > this.#feedLagMaxMs) return principalFromToken(this.ctx, token);
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

  async close(): Promise<void> {
    this.#closed = true;
    this.#feed?.stop();
    await this.#release();
  }
}
