/**
 * A listing's page reads that listing's ranks (control/catalog/inspect.service.ts listingRanks: WHERE api_id = ?),
 * which scanned the whole of leaderboard_entries (keyed by board, category, rank) on every view. The refresh job
 * rewrites the table in one transaction now and then, so the index costs nothing on any hot path. Schema builder
 * only: the same on PostgreSQL.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('leaderboard_entries_api').on('leaderboard_entries').column('api_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('leaderboard_entries_api').execute();
}
