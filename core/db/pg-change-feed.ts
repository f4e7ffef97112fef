/**
 * The change feed on PostgreSQL: `LISTEN svc_changes` as the wake-up, `changes.seq > last` as the truth. Shared by
 * every process that caches what the feed invalidates: the gateway's key and listing caches (on its own pipelined
 * connections, gateway/pg/change-feed.ts) and the MCP process's principal cache (on kysely, `kyselyFeedReads`).
 * Writers take the change-feed advisory lock before inserting (core/db/changes.ts), so `seq` order is commit order
 * and reading past `last` never skips a row that commits later; they `NOTIFY` with the new seq, delivered at their
 * commit.
 * - One dedicated connection per process, outside the pool (never through PgBouncer transaction mode).
 * - On every (re)connect: LISTEN first, then read past `last`, so nothing committed in between is missed.
 * - Polled anyway every `pollMs` (at most 1 s): a silently dead socket looks like a quiet channel, and a
 *   notification lost with a connection is then caught within a second.
 * - A lost connection is re-made with a doubling backoff (0.1 s up to 2 s); the feed never throws.
 * No rowid on PostgreSQL, so a new key is announced by a `('key', id)` change row (the control plane writes
 * one at key creation on PostgreSQL): any `key` row also calls `onNewKeys`.
 */
import pg from 'pg';
import type { ChangeRow, ChangeSource } from './change-feed.js';
import { CHANGES_CHANNEL } from './changes.js';
import type { Db } from './database.js';

const READ_LIMIT = 10_000;

/** The two reads the feed makes, on whatever connection the process has. */
export interface PgFeedReads {
  maxSeq(): Promise<number>;
  since(seq: number, limit: number): Promise<ChangeRow[]>;
}

/** The feed's reads through kysely (processes without the gateway's pipelined connections). */
export function kyselyFeedReads(db: Db): PgFeedReads {
  return {
    async maxSeq() {
      const r = await db
        .selectFrom('changes')
        .select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('seq'))
        .executeTakeFirstOrThrow();
      return Number(r.seq);
    },
    async since(seq, limit) {
      const rows = await db
        .selectFrom('changes')
        .select(['seq', 'entity', 'entity_id'])
        .where('seq', '>', seq)
        .orderBy('seq')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
    },
  };
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
    private readonly reads: PgFeedReads,
    private readonly url: string,
    private readonly onChange: (rows: ChangeRow[]) => void,
    private readonly onNewKeys: () => void,
    private readonly onError: (e: unknown) => void,
  ) {}

  /** Starts from the current end of the feed (everything before is already in the caches' loads). */
  static async open(
    reads: PgFeedReads,
    url: string,
    onChange: (rows: ChangeRow[]) => void,
    onNewKeys: () => void,
    onError: (e: unknown) => void,
  ): Promise<PgChangeFeed> {
    const f = new PgChangeFeed(reads, url, onChange, onNewKeys, onError);
    f.#seq = await reads.maxSeq();
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
        const rows = await this.reads.since(this.#seq, READ_LIMIT);
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
