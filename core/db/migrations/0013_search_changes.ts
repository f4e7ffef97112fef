/**
 * A change log for the in-memory search index (control/catalog/search-index.ts). Every write that can change a
 * listing's searchable text (name, summary, description, tags, endpoint paths) or its `listing_search` row appends
 * the listing's rowid, in the writing transaction, so each process's index re-reads only the listings that changed
 * instead of everything. `text` = 1 when the FTS text may have changed (the index tokenizes it again), 0 when only
 * the search row did (stats, price, visibility). AUTOINCREMENT keeps `seq` rising even after pruning empties the
 * table; the leaderboard refresh prunes old entries, and an index that finds a gap rebuilds.
 */
import { sql, type Kysely } from 'kysely';

const log = (doc: string, text: 0 | 1) => `INSERT INTO search_changes (doc, text) VALUES (${doc}, ${text});`;
const apiRowid = (apiId: string) => `(SELECT rowid FROM apis WHERE id = ${apiId})`;

const TRIGGERS: Record<string, string> = {
  listing_search_changes_ai: `AFTER INSERT ON listing_search BEGIN ${log('new.rowid', 0)} END`,
  listing_search_changes_au: `AFTER UPDATE ON listing_search BEGIN ${log('new.rowid', 0)} END`,
  listing_search_changes_ad: `AFTER DELETE ON listing_search BEGIN ${log('old.rowid', 0)} END`,
  apis_changes_ai: `AFTER INSERT ON apis BEGIN ${log('new.rowid', 1)} END`,
  apis_changes_au: `AFTER UPDATE OF name, summary, description, tags ON apis BEGIN ${log('new.rowid', 1)} END`,
  apis_changes_ad: `AFTER DELETE ON apis BEGIN ${log('old.rowid', 1)} END`,
  endpoints_changes_ai: `AFTER INSERT ON endpoints BEGIN ${log(apiRowid('new.api_id'), 1)} END`,
  endpoints_changes_au: `AFTER UPDATE OF path, removed_at, api_id ON endpoints
    WHEN old.path IS NOT new.path OR old.removed_at IS NOT new.removed_at OR old.api_id IS NOT new.api_id
    BEGIN ${log(apiRowid('old.api_id'), 1)} ${log(apiRowid('new.api_id'), 1)} END`,
  endpoints_changes_ad: `AFTER DELETE ON endpoints BEGIN ${log(apiRowid('old.api_id'), 1)} END`,
};

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `CREATE TABLE search_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        doc INTEGER NOT NULL,
        text INTEGER NOT NULL CHECK (text IN (0, 1))
      )`,
    )
    .execute(db);
  for (const [name, body] of Object.entries(TRIGGERS)) await sql.raw(`CREATE TRIGGER ${name} ${body}`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of Object.keys(TRIGGERS)) await sql.raw(`DROP TRIGGER ${name}`).execute(db);
  await sql.raw('DROP TABLE search_changes').execute(db);
}
