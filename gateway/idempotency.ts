/**
 * `Idempotency-Key` claims (idempotency_records, per org, 24 h): the first call claims the key in flight; a retry
 * with the same request replays the stored outcome (no second charge, no second upstream call), waits while the
 * first is in flight, and gets 409 `idempotency_conflict` when the key was used for a different request.
 * The claim joins the settle writer's group commit (one transaction per event-loop turn for every claim and settle
 * of that turn) and the call is forwarded only after that commit, so a concurrent retry in this or another
 * process sees the claim; the record is completed in the settle transaction of the call itself, so replay and
 * charge agree. A claim whose holder dies before completing it is dropped when the holder is reaped (instances.ts).
 */
import type Sqlite from 'better-sqlite3';
import { noWait, whenUnlocked, type NoWait } from './no-wait.js';
import type { ClaimStore } from './store.js';
import type { SettleWriter } from './settle-writer.js';

export type ClaimOutcome =
  | { kind: 'new' }
  | { kind: 'replay'; requestId: string; status: number; headers: [string, string][]; body: Buffer }
  | { kind: 'conflict' }
  | { kind: 'in_flight' };

export interface IdemRow {
  request_hash: string;
  request_id: string;
  state: 'in_flight' | 'done';
  response_status: number | null;
  response_headers_json: string | null;
  response_body: Buffer | null;
  expires_at: number;
}

export class IdempotencyStore implements ClaimStore {
  readonly #s: ReturnType<typeof _prepare>;
  readonly #noWait: NoWait;

  constructor(
    sqlite: Sqlite.Database,
    private readonly writer: SettleWriter,
    private readonly holderId: string,
    private readonly ttlMs: number,
    private readonly onBackgroundError: (e: unknown) => void,
  ) {
    this.#s = _prepare(sqlite);
    this.#noWait = noWait(sqlite);
  }

  /**
   * Resolves once the claim is committed (or the existing record read) in the writer's next batch. Never sleeps
   * on the write lock: the writer retries a held lock on a timer and rejects with SQLITE_BUSY after its limit.
   * `now` is read when the batch runs, so a claim that waited for the lock judges expiry at its own commit.
   */
  claim(orgId: string, key: string, requestHash: string, requestId: string, now: () => number): Promise<ClaimOutcome> {
    return this.writer.join(() => this.#claim(orgId, key, requestHash, requestId, now()));
  }

  /**
   * The first call failed upstream (not charged): free the key so a retry calls again. Never waits for the
   * lock: while it is held elsewhere the delete is retried on a timer (a retry meanwhile sees "in flight").
   */
  abandon(orgId: string, key: string, requestId: string): void {
    whenUnlocked(this.#noWait, () => this.#s.abandon.run(orgId, key, requestId), this.onBackgroundError);
  }

  #claim(orgId: string, key: string, hash: string, requestId: string, now: number): ClaimOutcome {
    const s = this.#s;
    let row = s.get.get(orgId, key);
    // Only a completed record expires: a call still in flight past the TTL (a short SVC_GATEWAY_IDEMPOTENCY_TTL_MS,
    // a slow upstream) keeps its claim, or a retry would be forwarded and charged a second time. An in-flight claim
    // ends with its call (completed or abandoned), or with its holder (reaped, or stopped: instances.ts).
    if (row && row.state === 'done' && row.expires_at <= now) {
      s.del.run(orgId, key);
      row = undefined;
    }
    if (!row) {
      s.insert.run(orgId, key, hash, requestId, this.holderId, now, now + this.ttlMs);
      return { kind: 'new' };
    }
    return existingClaim(row, hash);
  }
}

/** What an existing record answers a claim of `hash`: 409 for another request, wait while in flight, or replay. */
export function existingClaim(row: Omit<IdemRow, 'expires_at'>, hash: string): ClaimOutcome {
  if (row.request_hash !== hash) return { kind: 'conflict' };
  if (row.state === 'in_flight') return { kind: 'in_flight' };
  return {
    kind: 'replay',
    requestId: row.request_id,
    status: row.response_status ?? 200,
    headers: row.response_headers_json ? (JSON.parse(row.response_headers_json) as [string, string][]) : [],
    body: row.response_body ?? Buffer.alloc(0),
  };
}

function _prepare(db: Sqlite.Database) {
  return {
    get: db.prepare<[string, string], IdemRow>(
      'SELECT request_hash, request_id, state, response_status, response_headers_json, response_body, expires_at FROM idempotency_records WHERE org_id = ? AND idem_key = ?',
    ),
    del: db.prepare('DELETE FROM idempotency_records WHERE org_id = ? AND idem_key = ?'),
    insert: db.prepare(
      "INSERT INTO idempotency_records (org_id, idem_key, request_hash, request_id, state, holder_id, created_at, expires_at) VALUES (?, ?, ?, ?, 'in_flight', ?, ?, ?)",
    ),
    abandon: db.prepare(
      "DELETE FROM idempotency_records WHERE org_id = ? AND idem_key = ? AND request_id = ? AND state = 'in_flight'",
    ),
  };
}
