/**
 * Catalog search index (issue 10, item 6): `listing_search` holds one narrow row per searchable listing (live,
 * unsuspended, with at least one current endpoint) with everything search filters and sorts on (category, cheapest
 * current endpoint price, 30-day popularity and reliability, publish time), so a search never aggregates endpoints
 * or reads the wide `apis` row. Each sort has an index it can be read in, so a search without words stops after
 * one page.
 *
 * Triggers keep it in the writing transaction, like `apis_fts`: every writer of `apis` (publish, unpublish,
 * suspend, metadata PATCH), `endpoints` (price set, increase taking effect, import adding or removing endpoints) and
 * `api_stats` (the leaderboard refresh) goes through SQLite, so no code path can forget it.
 * rowid = apis.rowid = apis_fts.rowid, so a MATCH joins it by primary key.
 */
import { sql, type Kysely } from 'kysely';

/** 30-day success rate (status < 500) when the listing has at least 10 calls, else -1 so it sorts last. */
const RELIABILITY = (s: string) =>
  `CASE WHEN coalesce(${s}.calls_30d, 0) >= 10 THEN CAST(${s}.success_30d AS REAL) / ${s}.calls_30d ELSE -1 END`;

/**
 * Search rows of the listings `where` selects that are searchable (live, unsuspended, with a current endpoint),
 * recomputed from their sources.
 */
const insertRows = (where: string) => `
  INSERT INTO listing_search
    (rowid, api_id, category, published_at, min_price_cents, orgs_30d, calls_30d, reliability)
  SELECT a.rowid, a.id, a.category, coalesce(a.published_at, 0),
    (SELECT min(price_cents) FROM endpoints WHERE api_id = a.id AND removed_at IS NULL),
    coalesce(s.orgs_30d, 0), coalesce(s.calls_30d, 0), ${RELIABILITY('s')}
  FROM apis a LEFT JOIN api_stats s ON s.api_id = a.id
  WHERE ${where} AND a.status = 'live' AND a.suspended_at IS NULL
    AND EXISTS (SELECT 1 FROM endpoints WHERE api_id = a.id AND removed_at IS NULL);`;

/** After a change to listing `apiId`'s endpoints: its row goes, gets its new cheapest price, or appears. */
const syncPrice = (apiId: string) => `
  DELETE FROM listing_search WHERE api_id = ${apiId}
    AND NOT EXISTS (SELECT 1 FROM endpoints WHERE api_id = ${apiId} AND removed_at IS NULL);
  UPDATE listing_search
    SET min_price_cents = (SELECT min(price_cents) FROM endpoints WHERE api_id = ${apiId} AND removed_at IS NULL)
    WHERE api_id = ${apiId};
  ${insertRows(`a.id = ${apiId} AND NOT EXISTS (SELECT 1 FROM listing_search WHERE api_id = ${apiId})`)}`;

/** Trigger name → the writes that move `search_version`. */
const VERSION_EVENTS: Record<string, string> = {
  listing_search_version_ai: 'AFTER INSERT ON listing_search',
  listing_search_version_au: 'AFTER UPDATE ON listing_search',
  listing_search_version_ad: 'AFTER DELETE ON listing_search',
  // The FTS text of any listing, drafts included: bm25 weighs by the whole index's document count and lengths.
  apis_version_ai: 'AFTER INSERT ON apis',
  apis_version_au: 'AFTER UPDATE OF name, summary, description, tags ON apis',
  apis_version_ad: 'AFTER DELETE ON apis',
  endpoints_version_ai: 'AFTER INSERT ON endpoints',
  endpoints_version_au: 'AFTER UPDATE OF path, removed_at ON endpoints',
  endpoints_version_ad: 'AFTER DELETE ON endpoints',
};

const STATEMENTS = [
  `CREATE TABLE listing_search (
    rowid INTEGER PRIMARY KEY,
    api_id TEXT NOT NULL UNIQUE REFERENCES apis(id),
    category TEXT NOT NULL,
    published_at INTEGER NOT NULL,
    min_price_cents INTEGER NOT NULL,
    orgs_30d INTEGER NOT NULL DEFAULT 0,
    calls_30d INTEGER NOT NULL DEFAULT 0,
    reliability REAL NOT NULL DEFAULT -1
  )`,
  // One index per sort that can be read in order (with and without a category), ending in the api_id tie-break.
  `CREATE INDEX listing_search_popular ON listing_search(orgs_30d DESC, calls_30d DESC, published_at DESC, api_id)`,
  `CREATE INDEX listing_search_category_popular
     ON listing_search(category, orgs_30d DESC, calls_30d DESC, published_at DESC, api_id)`,
  `CREATE INDEX listing_search_price ON listing_search(min_price_cents, published_at DESC, api_id)`,
  `CREATE INDEX listing_search_category_price ON listing_search(category, min_price_cents, published_at DESC, api_id)`,
  `CREATE INDEX listing_search_newest ON listing_search(published_at DESC, api_id)`,
  `CREATE INDEX listing_search_reliable
     ON listing_search(reliability DESC, calls_30d DESC, published_at DESC, api_id)`,
  // min(price_cents) of a listing's current endpoints is one index probe, however many endpoints it has.
  `CREATE INDEX endpoints_current_price ON endpoints(api_id, price_cents) WHERE removed_at IS NULL`,
  `CREATE TRIGGER apis_search_ai AFTER INSERT ON apis BEGIN ${insertRows('a.id = new.id')} END`,
  `CREATE TRIGGER apis_search_au AFTER UPDATE OF status, suspended_at, category, published_at ON apis BEGIN
     DELETE FROM listing_search WHERE api_id = old.id;
     ${insertRows('a.id = new.id')}
   END`,
  `CREATE TRIGGER apis_search_ad AFTER DELETE ON apis BEGIN
     DELETE FROM listing_search WHERE api_id = old.id;
   END`,
  `CREATE TRIGGER endpoints_search_ai AFTER INSERT ON endpoints WHEN new.removed_at IS NULL BEGIN
     ${syncPrice('new.api_id')}
   END`,
  // Only a real change recomputes: a re-import rewrites every matched endpoint with removed_at = NULL.
  `CREATE TRIGGER endpoints_search_au AFTER UPDATE OF price_cents, removed_at, api_id ON endpoints
   WHEN old.price_cents IS NOT new.price_cents OR old.removed_at IS NOT new.removed_at OR old.api_id IS NOT new.api_id
   BEGIN
     ${syncPrice('old.api_id')}
     ${syncPrice('new.api_id')}
   END`,
  `CREATE TRIGGER endpoints_search_ad AFTER DELETE ON endpoints BEGIN
     ${syncPrice('old.api_id')}
   END`,
  `CREATE TRIGGER api_stats_search_ai AFTER INSERT ON api_stats BEGIN
     UPDATE listing_search SET orgs_30d = new.orgs_30d, calls_30d = new.calls_30d, reliability = ${RELIABILITY('new')}
     WHERE api_id = new.api_id;
   END`,
  // The stats refresh upserts every row: only a changed one rewrites the listing's search row.
  `CREATE TRIGGER api_stats_search_au AFTER UPDATE ON api_stats
   WHEN old.api_id IS NOT new.api_id OR old.orgs_30d IS NOT new.orgs_30d OR old.calls_30d IS NOT new.calls_30d
     OR old.success_30d IS NOT new.success_30d
   BEGIN
     UPDATE listing_search SET orgs_30d = 0, calls_30d = 0, reliability = -1 WHERE api_id = old.api_id;
     UPDATE listing_search SET orgs_30d = new.orgs_30d, calls_30d = new.calls_30d, reliability = ${RELIABILITY('new')}
     WHERE api_id = new.api_id;
   END`,
  `CREATE TRIGGER api_stats_search_ad AFTER DELETE ON api_stats BEGIN
     UPDATE listing_search SET orgs_30d = 0, calls_30d = 0, reliability = -1 WHERE api_id = old.api_id;
   END`,
  // A counter every change that can alter a search result moves: the search cache's key (control/catalog).
  `CREATE TABLE search_version (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)`,
  `INSERT INTO search_version (id, n) VALUES (1, 0)`,
  ...Object.entries(VERSION_EVENTS).map(
    ([name, event]) => `CREATE TRIGGER ${name} ${event} BEGIN UPDATE search_version SET n = n + 1 WHERE id = 1; END`,
  ),
  // Backfill every searchable listing.
  insertRows('1').trim().replace(/;$/, ''),
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const s of STATEMENTS) await sql.raw(s).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of Object.keys(VERSION_EVENTS)) await sql.raw(`DROP TRIGGER IF EXISTS ${name}`).execute(db);
  for (const s of [
    'DROP TABLE IF EXISTS search_version',
    'DROP TRIGGER IF EXISTS api_stats_search_ad',
    'DROP TRIGGER IF EXISTS api_stats_search_au',
    'DROP TRIGGER IF EXISTS api_stats_search_ai',
    'DROP TRIGGER IF EXISTS endpoints_search_ad',
    'DROP TRIGGER IF EXISTS endpoints_search_au',
    'DROP TRIGGER IF EXISTS endpoints_search_ai',
    'DROP TRIGGER IF EXISTS apis_search_ad',
    'DROP TRIGGER IF EXISTS apis_search_au',
    'DROP TRIGGER IF EXISTS apis_search_ai',
    'DROP INDEX IF EXISTS endpoints_current_price',
    'DROP TABLE IF EXISTS listing_search',
  ])
    await sql.raw(s).execute(db);
}
