/**
 * The cross-process change feed. Control-plane writes that a running gateway caches (key revoke or caps,
 * org credit or suspension, listing price/state, terms) append a row here in the same transaction;
 * gateways poll `PRAGMA data_version` (SQLite) or LISTEN (PostgreSQL) and read rows past their last seq.
 *
 * On PostgreSQL the insert first takes the change-feed advisory lock (held to commit), so `seq` order is commit
 * order and a reader of `seq > last` never skips a row that commits later (scale-out-notes §2.4), and it sends
 * `NOTIFY svc_changes '<seq>'`, delivered when the writing transaction commits. One statement, so a caller
 * outside a transaction gets the same guarantees.
 */
import { sql } from 'kysely';
import type { ChangeEntity, Db } from './database.js';
import { dialectOf, LOCK_IDS } from './dialect.js';

/** The NOTIFY channel the change feed's writers signal (payload: the new seq). */
export const CHANGES_CHANNEL = 'svc_changes';

export async function recordChange(db: Db, entity: ChangeEntity, entityId: string, now: number): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`WITH l AS (SELECT pg_advisory_xact_lock(${LOCK_IDS.changes})),
      ins AS (INSERT INTO changes (entity, entity_id, created_at)
              SELECT ${entity}, ${entityId}, ${now} FROM l RETURNING seq)
      SELECT pg_notify(${CHANGES_CHANNEL}, seq::text) FROM ins`.execute(db);
    return;
  }
  await db.insertInto('changes').values({ entity, entity_id: entityId, created_at: now }).execute();
}
