/**
 * The gateway's side of the PostgreSQL change feed (core/db/pg-change-feed.ts): the feed's reads on the gateway's
 * own pipelined connections, and `recordChange` for the gateway's own pressure signal. Writers take the change-feed
 * advisory lock before inserting, so `seq` order is commit order; they `NOTIFY` with the new seq.
 */
import type { ChangeRow } from '../../core/db/change-feed.js';
import { CHANGES_CHANNEL } from '../../core/db/changes.js';
import { LOCK_IDS } from '../../core/db/dialect.js';
import type { PgFeedReads } from '../../core/db/pg-change-feed.js';
import { sql, type Pg, type Q } from './connect.js';

export { PgChangeFeed } from '../../core/db/pg-change-feed.js';

/** Appends a change row with the ordering lock and its NOTIFY, in one statement (the gateway's pressure signal). */
export function recordChange(entity: ChangeRow['entity'], entityId: string, now: number): Q {
  return sql`WITH l AS (SELECT pg_advisory_xact_lock(${LOCK_IDS.changes})),
    ins AS (INSERT INTO changes (entity, entity_id, created_at) SELECT ${entity}, ${entityId}, ${now} FROM l RETURNING seq)
    SELECT pg_notify(${CHANGES_CHANNEL}, seq::text) FROM ins`;
}

/** The feed's two reads on the gateway's connections. */
export function pgFeedReads(db: Pg): PgFeedReads {
  return {
    async maxSeq() {
      const [r] = await db.rows<{ seq: number }>(sql`SELECT COALESCE(max(seq), 0)::bigint AS seq FROM changes`);
      return r!.seq;
    },
    since: (seq, limit) =>
      db.rows<ChangeRow>(
        sql`SELECT seq, entity, entity_id FROM changes WHERE seq > ${seq} ORDER BY seq LIMIT ${limit}`,
      ),
  };
}
