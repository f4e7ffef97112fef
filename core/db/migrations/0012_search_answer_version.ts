/**
 * The search cache (control/catalog/search-cache.ts) keeps whole answers, listing summaries included, for as long
 * as `search_version` stands. Migration 0010 moves it on every write that changes which listings match and in what
 * order; a summary also shows the listing's slug and its provider's slug and name, so renaming those moves it too.
 */
import { sql, type Kysely } from 'kysely';

const TRIGGERS: Record<string, string> = {
  providers_version_au: 'AFTER UPDATE OF slug, display_name ON providers',
  apis_slug_version_au: 'AFTER UPDATE OF slug ON apis',
};

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, event] of Object.entries(TRIGGERS))
    await sql
      .raw(`CREATE TRIGGER ${name} ${event} BEGIN UPDATE search_version SET n = n + 1 WHERE id = 1; END`)
      .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of Object.keys(TRIGGERS)) await sql.raw(`DROP TRIGGER ${name}`).execute(db);
}
