/**
 * The change feed on PostgreSQL: `LISTEN svc_changes` as the wake-up, `changes.seq > last` as the truth.
 * Writers take the change-feed advisory lock before inserting (core/db/changes.ts; `recordChange` below for the
 * gateway's own pressure signal), so `seq` order is commit order and reading past `last` never skips a row that
 * commits later; they `NOTIFY` with the new seq, delivered at their commit.
 * - One dedicated connection per process, outside the pool (never through PgBouncer transaction mode).
 * - On every (re)connect: LISTEN first, then read past `last`, so nothing committed in between is missed.
 * - Polled anyway every `pollMs` (default 1 s): a silently dead socket looks like a quiet channel, and a
 *   notification lost with a connection is then caught within a second.
 * - A lost connection is re-made with a doubling backoff (0.1 s up to 2 s); the feed never throws.
 * No rowid on PostgreSQL, so a new key is announced by a `('key', id)` change row (the control plane writes
 * one at key creation on PostgreSQL): any `key` row also clears the negative key cache.
 */
import pg from 'pg';
import type { ChangeRow } from '../../core/db/change-feed.js';
import type { ChangeSource } from '../store.js';
import { sql, type Pg, type Q } from './connect.js';

/** The NOTIFY channel (core/db/changes.ts CHANGES_CHANNEL). */
export const CHANGES_CHANNEL = 'svc_changes';
/** The advisory lock writers of `changes` hold to commit (core/db/dialect.ts LOCK_IDS.changes). */
export const CHANGES_LOCK_ID = 0x5356_4301;
const READ_LIMIT = 10_000;

/** Appends a change row with the ordering lock and its NOTIFY, in one statement (the gateway's pressure signal). */
export function recordChange(entity: ChangeRow['entity'], entityId: string, now: number): Q {
  return sql`WITH l AS (SELECT pg_advisory_xact_lock(${CHANGES_LOCK_ID})),
    ins AS (INSERT INTO changes (entity, entity_id, created_at) SELECT ${entity}, ${entityId}, ${now} FROM l RETURNING seq)
    SELECT pg_notify(${CHANGES_CHANNEL}, seq::text) FROM ins`;
}

export class PgChangeFeed implements ChangeSource {
  #seq = 0;
  #polledAt = performance.now();
  #client: pg.Client | null = null;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #reading: Promise<void> | null = null;
  #again = false;
  #backoff = 100;

  private constructor(
    private readonly db: Pg,
    private readonly url: string,
    private readonly onChange: (rows: ChangeRow[]) => void,
    private readonly onNewKeys: () => void,
    private readonly onError: (e: unknown) => void,
  ) {}

  /** Starts from the current end of the feed (everything before is already in the caches' loads). */
  static async open(
    db: Pg,
    url: string,
    onChange: (rows: ChangeRow[]) => void,
    onNewKeys: () => void,
    onError: (e: unknown) => void,
  ): Promise<PgChangeFeed> {
    const f = new PgChangeFeed(db, url, onChange, onNewKeys, onError);
    const [r] = await db.rows<{ seq: number }>(sql`SELECT COALESCE(max(seq), 0)::bigint AS seq FROM changes`);
    f.#seq = r!.seq;
    return f;
  }

  get seq(): number {
    return this.#seq;
  }

  get polledAt(): number {
    return this.#polledAt;
  }

  /** Listens, and polls every `intervalMs` as the fallback (at most 1 s apart, whatever is asked). */
  start(intervalMs: number): void {
    void this.#listen();
    this.#timer = setInterval(() => void this.poll(), Math.min(Math.max(intervalMs, 100), 1_000));
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    const c = this.#client;
    this.#client = null;
    if (c) void c.end().catch(() => {});
  }

  async #listen(): Promise<void> {
    if (this.#stopped) return;
    const c = new pg.Client({ connectionString: this.url, keepAlive: true, keepAliveInitialDelayMillis: 5_000 });
    const retry = (e: unknown) => {
      if (this.#client !== c) return;
      this.#client = null;
      c.end().catch(() => {});
      if (this.#stopped) return;
      this.onError(e);
      setTimeout(() => void this.#listen(), this.#backoff).unref();
      this.#backoff = Math.min(this.#backoff * 2, 2_000);
    };
    this.#client = c;
    c.on('error', retry);
    c.on('end', () => retry(new Error('change feed connection ended')));
    c.on('notification', () => void this.poll());
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANGES_CHANNEL}`);
      this.#backoff = 100;
      await this.poll(); // whatever committed while we were not listening
    } catch (e) {
      retry(e);
    }
  }

  /** Reads the rows past the last seq (one read at a time; a wake-up during a read reads again after it). */
  poll(): Promise<void> {
    if (this.#reading) {
      this.#again = true;
      return this.#reading;
    }
    this.#reading = this.#read().finally(() => {
      this.#reading = null;
      if (this.#again) {
        this.#again = false;
        void this.poll();
      }
    });
    return this.#reading;
  }

  async #read(): Promise<void> {
    try {
      for (;;) {
        const rows = await this.db.rows<ChangeRow>(
          sql`SELECT seq, entity, entity_id FROM changes WHERE seq > ${this.#seq} ORDER BY seq LIMIT ${READ_LIMIT}`,
        );
        if (rows.length) {
          this.#seq = rows[rows.length - 1]!.seq;
          this.onChange(rows);
          if (rows.some((r) => r.entity === 'key')) this.onNewKeys();
        }
        if (rows.length < READ_LIMIT) break;
      }
      this.#polledAt = performance.now();
    } catch (e) {
      this.onError(e); // retried on the next tick or notification
    }
  }
}
