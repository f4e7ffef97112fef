/**
 * A change log for the in-memory search index (control/catalog/search-index.ts). Every write that can change a
 * listing's searchable text (name, summary, description, tags, endpoint paths), its `listing_search` row, or what
 * its search summary shows (slug, provider, endpoint prices, 30-day stats) appends the listing's rowid, in the
 * writing transaction, so each process's index re-reads only the listings that changed and drops their cached
 * summaries. `text` = 1 when the FTS text may have changed (the index tokenizes it again), 0 otherwise.
 * AUTOINCREMENT keeps `seq` rising even after pruning empties the table; the leaderboard refresh prunes old
 * entries, and an index that finds a gap rebuilds.
 */
import { sql, type Kysely } from 'kysely';

const log = (doc: string, text: 0 | 1) => `INSERT INTO search_changes (doc, text) VALUES (${doc}, ${text});`;
/** Logs the listing `apiId` names (nothing if it is gone). */
const logApi = (apiId: string, text: 0 | 1) =>
  `INSERT INTO search_changes (doc, text) SELECT rowid, ${text} FROM apis WHERE id = ${apiId};`;
/**
 * While an import writes a listing's endpoints, its FTS paths wait (fts_deferred, migration 0007): one entry when
 * the deferral ends (below) instead of one per endpoint.
 */
const NOT_DEFERRED = (apiId: string) => `NOT EXISTS (SELECT 1 FROM fts_deferred WHERE api_id = ${apiId})`;

const TRIGGERS: Record<string, string> = {
  listing_search_changes_ai: `AFTER INSERT ON listing_search BEGIN ${log('new.rowid', 0)} END`,
  listing_search_changes_au: `AFTER UPDATE ON listing_search BEGIN ${log('new.rowid', 0)} END`,
  listing_search_changes_ad: `AFTER DELETE ON listing_search BEGIN ${log('old.rowid', 0)} END`,
  apis_changes_ai: `AFTER INSERT ON apis BEGIN ${log('new.rowid', 1)} END`,
  apis_changes_au: `AFTER UPDATE OF name, summary, description, tags ON apis BEGIN ${log('new.rowid', 1)} END`,
  apis_changes_ad: `AFTER DELETE ON apis BEGIN ${log('old.rowid', 1)} END`,
  endpoints_changes_ai: `AFTER INSERT ON endpoints WHEN ${NOT_DEFERRED('new.api_id')}
    BEGIN ${logApi('new.api_id', 1)} END`,
  endpoints_changes_au: `AFTER UPDATE OF path, removed_at, api_id ON endpoints
    WHEN (old.path IS NOT new.path OR old.removed_at IS NOT new.removed_at OR old.api_id IS NOT new.api_id)
      AND ${NOT_DEFERRED('new.api_id')}
    BEGIN ${logApi('old.api_id', 1)} ${logApi('new.api_id', 1)} END`,
  endpoints_changes_ad: `AFTER DELETE ON endpoints WHEN ${NOT_DEFERRED('old.api_id')}
    BEGIN ${logApi('old.api_id', 1)} END`,
  // The deferral ends in the transaction that writes the listing's FTS paths directly (import-store.ts): that write
  // goes through no trigger, so this entry (and the search version, which it did not move either) stands for it.
  fts_deferred_changes_ad: `AFTER DELETE ON fts_deferred BEGIN
    ${logApi('old.api_id', 1)} UPDATE search_version SET n = n + 1 WHERE id = 1; END`,
  // What a summary shows beyond the search row: the slug, the provider, every endpoint price, the 30-day stats.
  apis_slug_changes_au: `AFTER UPDATE OF slug ON apis BEGIN ${log('new.rowid', 0)} END`,
  endpoints_price_changes_au: `AFTER UPDATE OF price_cents ON endpoints
    WHEN old.price_cents IS NOT new.price_cents AND ${NOT_DEFERRED('new.api_id')}
    BEGIN ${logApi('new.api_id', 0)} END`,
  api_stats_changes_ai: `AFTER INSERT ON api_stats BEGIN ${logApi('new.api_id', 0)} END`,
  api_stats_changes_au: `AFTER UPDATE ON api_stats BEGIN ${logApi('new.api_id', 0)} END`,
  api_stats_changes_ad: `AFTER DELETE ON api_stats BEGIN ${logApi('old.api_id', 0)} END`,
  providers_changes_au: `AFTER UPDATE OF slug, display_name ON providers BEGIN
    INSERT INTO search_changes (doc, text) SELECT rowid, 0 FROM apis WHERE org_id = new.org_id; END`,
  // A provider profile made (or removed) after its org listed APIs changes their summaries too; migration 0012
  // moved the search version only on a rename.
  providers_changes_ai: `AFTER INSERT ON providers BEGIN
    INSERT INTO search_changes (doc, text) SELECT rowid, 0 FROM apis WHERE org_id = new.org_id;
    UPDATE search_version SET n = n + 1 WHERE id = 1; END`,
  providers_changes_ad: `AFTER DELETE ON providers BEGIN
    INSERT INTO search_changes (doc, text) SELECT rowid, 0 FROM apis WHERE org_id = old.org_id;
    UPDATE search_version SET n = n + 1 WHERE id = 1; END`,
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
