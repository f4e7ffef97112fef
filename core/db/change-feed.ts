/**
 * Cross-process invalidation: polls `PRAGMA data_version` (~2 µs; it moves only when ANOTHER connection
 * committed) and, when it moved, reads the `changes` rows past the last seen seq and hands them to `onChange`.
 * New api_keys rows (max rowid) call `onNewKeys` (the gateway clears its negative key cache so a just-created key
 * works at once). Used by the gateway's key/listing caches and the MCP process's principal cache: a process whose
 * own connection also writes changes gives the feed a connection of its own, so its own commits move data_version.
 */
import type Sqlite from 'better-sqlite3';
import type { ChangeEntity } from './database.js';

/** Change rows read per poll at most: a reader that fell far behind catches up over a few ticks. */
const READ_LIMIT = 10_000;

export interface ChangeRow {
  seq: number;
  entity: ChangeEntity;
  entity_id: string;
}

/** Cross-process invalidation, either store: `changes` rows past the last seq reach the owner's `onChange`. */
export interface ChangeSource {
  start(intervalMs: number): void;
  stop(): void;
  /** The last `changes.seq` applied (tests wait on it through /healthz). */
  readonly seq: number;
  /** `performance.now()` of the last poll that read successfully. */
  readonly polledAt: number;
}

export class ChangeFeed implements ChangeSource {
  #dataVersion: number;
  #seq: number;
  #maxKeyRowid: number;
  #timer: NodeJS.Timeout | undefined;
  #polledAt = performance.now();
  readonly #s: ReturnType<typeof _prepare>;

  constructor(
    sqlite: Sqlite.Database,
    private readonly onChange: (rows: ChangeRow[]) => void,
    private readonly onNewKeys: () => void,
    private readonly onError: (e: unknown) => void,
  ) {
    this.#s = _prepare(sqlite);
    this.#dataVersion = this.#version();
    this.#seq = this.#s.maxSeq.get()!.seq;
    this.#maxKeyRowid = this.#s.maxKey.get()!.r;
  }

  start(intervalMs: number): void {
    this.#timer = setInterval(() => {
      try {
        this.poll();
      } catch (e) {
        // Never fatal: a poll whose read failed is retried on the next tick.
        this.onError(e);
      }
    }, intervalMs);
    this.#timer.unref();
  }

  /** The last `changes.seq` this process has applied (tests wait on it via /healthz). */
  get seq(): number {
    return this.#seq;
  }

  /**
   * `performance.now()` of the last poll that read successfully (or found nothing new). A reader whose cache must
   * not outlive the feed's bound checks it: a feed whose reads keep failing is current no longer.
   */
  get polledAt(): number {
    return this.#polledAt;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  poll(): void {
    const v = this.#version();
    if (v === this.#dataVersion) {
      this.#polledAt = performance.now();
      return;
    }
    // Read everything before marking the version seen: a failed read is simply retried on the next tick.
    const rows = this.#s.since.all(this.#seq);
    const r = this.#s.maxKey.get()!.r;
    // A full read may have left rows behind: keep the version unseen so the next tick reads on, rather than
    // leaving the rest (a revocation among them) until some other commit happens to move data_version.
    if (rows.length < READ_LIMIT) this.#dataVersion = v;
    if (rows.length) {
      this.#seq = rows[rows.length - 1]!.seq;
      this.onChange(rows);
    }
    if (r !== this.#maxKeyRowid) {
      this.#maxKeyRowid = r;
      this.onNewKeys();
    }
    this.#polledAt = performance.now();
  }

  #version(): number {
    return this.#s.dataVersion.get() as number;
  }
}

function _prepare(db: Sqlite.Database) {
  return {
    maxSeq: db.prepare<[], { seq: number }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM changes'),
    since: db.prepare<[number], ChangeRow>(
      `SELECT seq, entity, entity_id FROM changes WHERE seq > ? ORDER BY seq LIMIT ${READ_LIMIT}`,
    ),
    dataVersion: db.prepare('PRAGMA data_version').pluck(),
    maxKey: db.prepare<[], { r: number }>('SELECT COALESCE(MAX(rowid), 0) AS r FROM api_keys'),
  };
}
