/**
 * Idempotency-Key claims on PostgreSQL, across every gateway: one statement takes a new key, or a completed one
 * whose 24 h ran out, and only for a live holder (`FOR SHARE` on its row: a reaped holder claims nothing):
 *   INSERT … SELECT … FROM gateway_instances … FOR SHARE
 *   ON CONFLICT (org_id, idem_key) DO UPDATE … WHERE state = 'done' AND expires_at <= now
 * An INSERT that meets another transaction's uncommitted claim of the same key waits for it, so two gateways
 * never both win. No row back: the existing record decides (replay, 409 conflict, or "in flight"). Expiry is
 * judged on the database's clock (plus the dev clock's offset, which tests move), never a host's own clock.
 * The claim commits on its own before the call is forwarded; the record completes in the call's settle batch.
 */
import { existingClaim, type ClaimOutcome, type IdemRow } from '../idempotency.js';
import { HolderReapedError } from '../settle-writer.js';
import type { ClaimStore } from '../store.js';
import { DB_NOW_MS, raw, sql, type Pg } from './connect.js';

export class PgIdempotency implements ClaimStore {
  constructor(
    private readonly db: Pg,
    private readonly holderId: string,
    private readonly ttlMs: number,
    private readonly onBackgroundError: (e: unknown) => void,
  ) {}

  /** `now()` is the caller's clock; only its offset from real time is used (the dev clock's test offset). */
  async claim(orgId: string, key: string, hash: string, requestId: string, now: () => number): Promise<ClaimOutcome> {
    // A record that vanished between the claim and the read (abandoned meanwhile) means: try again.
    for (let attempt = 0; ; attempt++) {
      const out = await this.#claimOnce(orgId, key, hash, requestId, now() - Date.now());
      if (out) return out;
      const [live] = await this.db.rows(
        sql`SELECT 1 AS ok FROM gateway_instances WHERE id = ${this.holderId} AND stopped_at IS NULL`,
      );
      if (!live) throw new HolderReapedError('this gateway holder is stopped; it takes no new Idempotency-Key claim');
      if (attempt >= 3) return { kind: 'in_flight' };
    }
  }

  async #claimOnce(
    orgId: string,
    key: string,
    hash: string,
    requestId: string,
    offset: number,
  ): Promise<ClaimOutcome | null> {
    const t = `(${DB_NOW_MS} + $7::bigint)`;
    const won = await this.db.rows(
      raw(
        `INSERT INTO idempotency_records (org_id, idem_key, request_hash, request_id, state, holder_id, created_at, expires_at)
       SELECT $1, $2, $3, $4, 'in_flight', $5, ${t}, ${t} + $6::bigint
       FROM gateway_instances WHERE id = $5 AND stopped_at IS NULL FOR SHARE
       ON CONFLICT (org_id, idem_key) DO UPDATE SET request_hash = excluded.request_hash,
         request_id = excluded.request_id, state = 'in_flight', holder_id = excluded.holder_id,
         created_at = excluded.created_at, expires_at = excluded.expires_at,
         response_status = NULL, response_headers_json = NULL, response_body = NULL
       WHERE idempotency_records.state = 'done' AND idempotency_records.expires_at <= ${t}
       RETURNING request_id`,
        [orgId, key, hash, requestId, this.holderId, this.ttlMs, offset],
      ),
    );
    if (won.length === 1) return { kind: 'new' };
    const [row] = await this.db.rows<Omit<IdemRow, 'expires_at'>>(sql`
      SELECT request_hash, request_id, state, response_status, response_headers_json, response_body
      FROM idempotency_records WHERE org_id = ${orgId} AND idem_key = ${key}`);
    return row ? existingClaim(row, hash) : null;
  }

  abandon(orgId: string, key: string, requestId: string): void {
    this.db
      .rows(
        sql`DELETE FROM idempotency_records WHERE org_id = ${orgId} AND idem_key = ${key}
            AND request_id = ${requestId} AND state = 'in_flight'`,
      )
      .then(
        () => {},
        (e: unknown) => this.onBackgroundError(e),
      );
  }
}
