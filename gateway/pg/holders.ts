/**
 * The holder registry on PostgreSQL: this process's `gateway_instances` row, its heartbeat, and the reaper.
 * Every time here is the database's clock (DB_NOW_MS): heartbeats written with each host's own clock would be
 * compared across skewed clocks. A pid is tested only for holders of this same host (hostIdentity()).
 *
 * Reaping runs on every node at once without blocking another: candidates are locked `FOR UPDATE SKIP LOCKED`
 * (a row another reaper holds is skipped). Before the holder rows, the orgs of their open leases are locked in
 * org-id order, the order every lease transaction locks in, so reaper and acquisitions never deadlock. The
 * reaper's UPDATE conflicts with the `FOR SHARE` every settle batch and acquisition takes on its holder row
 * (fencing): either the batch commits first and the reaper folds its spend, or the reaper commits first and the
 * batch finds its holder stopped and rolls back.
 */
import { newId } from '../../core/ids.js';
import { hostIdentity, pidAlive } from '../instances.js';
import type { HolderStore } from '../store.js';
import { DB_NOW_MS, raw, sql, type Pg } from './connect.js';
import { foldAndRelease, lockOrgsOfHolder } from './fold.js';

export class PgHolders implements HolderStore {
  readonly id: string;

  private constructor(
    private readonly db: Pg,
    id: string,
    readonly host: string,
  ) {
    this.id = id;
  }

  static async register(db: Pg, now: number, host: string = hostIdentity()): Promise<PgHolders> {
    const id = newId('gw', now);
    await db.rows(
      raw(
        `INSERT INTO gateway_instances (id, pid, host, started_at, heartbeat_at) VALUES ($1, $2, $3, ${DB_NOW_MS}, ${DB_NOW_MS})`,
        [id, process.pid, host],
      ),
    );
    return new PgHolders(db, id, host);
  }

  /** A heartbeat needs no durability: losing the last one in a crash only makes the holder look older. */
  async heartbeat(): Promise<boolean> {
    const [, r] = await this.db.pipeline([
      sql`SET LOCAL synchronous_commit = off`,
      raw(
        `UPDATE gateway_instances SET heartbeat_at = ${DB_NOW_MS} WHERE id = $1 AND stopped_at IS NULL RETURNING id`,
        [this.id],
      ),
    ]);
    return r!.length === 1;
  }

  /** The number of live holders fleet-wide (lease sizing divides each org's headroom among them). */
  async liveCount(): Promise<number> {
    const [r] = await this.db.rows<{ n: number }>(
      sql`SELECT count(*) AS n FROM gateway_instances WHERE stopped_at IS NULL`,
    );
    return Math.max(1, r!.n);
  }

  /**
   * Reaps holders whose heartbeat is older than `staleMs` by the database's clock, or (same host only) whose pid
   * is gone; returns the cents their released leases gave back. `now` is used only for `released_at`.
   */
  async reapDead(now: number, staleMs: number): Promise<number> {
    const candidates = await this.db.rows<{ id: string; pid: number; host: string; stale: boolean }>(
      raw(
        `SELECT id, pid, host, heartbeat_at < ${DB_NOW_MS} - $2 AS stale FROM gateway_instances
         WHERE stopped_at IS NULL AND id <> $1`,
        [this.id, staleMs],
      ),
    );
    const dead = candidates.filter((h) => h.stale || (h.host === this.host && !pidAlive(h.pid)));
    let back = 0;
    for (const h of dead) back += await this.#reapOne(h.id, h.stale ? staleMs : null, now);
    return back;
  }

  async #reapOne(holderId: string, staleMs: number | null, now: number): Promise<number> {
    return this.db.transaction(async (run) => {
      // Org rows first, in id order (the lease transactions' order), then the holder row: no deadlock cycle.
      await run(lockOrgsOfHolder(holderId));
      // Checked again under the lock: a holder that heartbeat meanwhile is not dead after all.
      const stale = staleMs === null ? 'true' : `heartbeat_at < ${DB_NOW_MS} - $2`;
      const hit = await run(
        raw(
          `UPDATE gateway_instances SET stopped_at = ${DB_NOW_MS}
           WHERE id IN (SELECT id FROM gateway_instances WHERE id = $1 AND stopped_at IS NULL AND ${stale}
                        FOR UPDATE SKIP LOCKED)
           RETURNING id`,
          staleMs === null ? [holderId] : [holderId, staleMs],
        ),
      );
      if (hit.length !== 1) return 0;
      const back = await foldAndRelease(run, { holderId }, now);
      await run(sql`DELETE FROM idempotency_records WHERE holder_id = ${holderId} AND state = 'in_flight'`);
      return back;
    });
  }

  async markStopped(): Promise<void> {
    await this.db.pipeline([
      raw(`UPDATE gateway_instances SET stopped_at = ${DB_NOW_MS} WHERE id = $1 AND stopped_at IS NULL`, [this.id]),
      sql`DELETE FROM idempotency_records WHERE holder_id = ${this.id} AND state = 'in_flight'`,
    ]);
  }
}
