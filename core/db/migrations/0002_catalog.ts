/**
 * Catalog additions: the FTS5 index over live-listing text (kept in sync by triggers), pending discount tiers on
 * price changes, and the materialized per-listing stats the search sorts read (refreshed off the hot path).
 */
import { sql, type Kysely } from 'kysely';

const STATEMENTS = [
  // rowid = apis.rowid, so trigger maintenance is a keyed delete + insert, never a scan.
  `CREATE VIRTUAL TABLE apis_fts USING fts5(
    name, summary, description, tags, paths,
    tokenize = 'porter unicode61 remove_diacritics 2'
  )`,
  `CREATE TRIGGER apis_fts_ai AFTER INSERT ON apis BEGIN
     INSERT INTO apis_fts(rowid, name, summary, description, tags, paths)
     VALUES (new.rowid, new.name, new.summary, new.description, new.tags, '');
   END`,
  `CREATE TRIGGER apis_fts_au AFTER UPDATE OF name, summary, description, tags ON apis BEGIN
     DELETE FROM apis_fts WHERE rowid = old.rowid;
     INSERT INTO apis_fts(rowid, name, summary, description, tags, paths)
     VALUES (new.rowid, new.name, new.summary, new.description, new.tags,
       coalesce((SELECT group_concat(path, ' ') FROM endpoints WHERE api_id = new.id AND removed_at IS NULL), ''));
   END`,
  `CREATE TRIGGER apis_fts_ad AFTER DELETE ON apis BEGIN
     DELETE FROM apis_fts WHERE rowid = old.rowid;
   END`,
  `CREATE TRIGGER endpoints_fts_ai AFTER INSERT ON endpoints BEGIN
     UPDATE apis_fts SET paths = coalesce((SELECT group_concat(path, ' ') FROM endpoints WHERE api_id = new.api_id AND removed_at IS NULL), '')
     WHERE rowid = (SELECT rowid FROM apis WHERE id = new.api_id);
   END`,
  `CREATE TRIGGER endpoints_fts_au AFTER UPDATE OF path, removed_at ON endpoints BEGIN
     UPDATE apis_fts SET paths = coalesce((SELECT group_concat(path, ' ') FROM endpoints WHERE api_id = new.api_id AND removed_at IS NULL), '')
     WHERE rowid = (SELECT rowid FROM apis WHERE id = new.api_id);
   END`,
  `ALTER TABLE price_changes ADD COLUMN old_discounts_json TEXT`,
  `ALTER TABLE price_changes ADD COLUMN new_discounts_json TEXT`,
  `CREATE TABLE api_stats (
    api_id TEXT PRIMARY KEY REFERENCES apis(id),
    calls_30d INTEGER NOT NULL DEFAULT 0,
    success_30d INTEGER NOT NULL DEFAULT 0,
    orgs_30d INTEGER NOT NULL DEFAULT 0,
    gross_30d_cents INTEGER NOT NULL DEFAULT 0,
    computed_at INTEGER NOT NULL
  )`,
  `CREATE INDEX apis_status ON apis(status, category)`,
  `CREATE INDEX usage_provider ON usage_events(provider_org_id, created_at)`,
  `CREATE INDEX legal_documents_api ON legal_documents(api_id, status, activated_at)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const s of STATEMENTS) await sql.raw(s).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const s of [
    'DROP INDEX IF EXISTS legal_documents_api',
    'DROP INDEX IF EXISTS usage_provider',
    'DROP INDEX IF EXISTS apis_status',
    'DROP TABLE IF EXISTS api_stats',
    'ALTER TABLE price_changes DROP COLUMN new_discounts_json',
    'ALTER TABLE price_changes DROP COLUMN old_discounts_json',
    'DROP TRIGGER IF EXISTS endpoints_fts_au',
    'DROP TRIGGER IF EXISTS endpoints_fts_ai',
    'DROP TRIGGER IF EXISTS apis_fts_ad',
    'DROP TRIGGER IF EXISTS apis_fts_au',
    'DROP TRIGGER IF EXISTS apis_fts_ai',
    'DROP TABLE IF EXISTS apis_fts',
  ])
    await sql.raw(s).execute(db);
}
