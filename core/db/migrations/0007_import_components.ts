/**
 * Imports keep what used to be lost, and large imports stop being quadratic:
 * - `apis.schema_components_json`: a listing's named schema components (recursive or very large schemas, which
 *   endpoint schemas reference as `#/components/schemas/<Name>`); `apis.import_report_json`: the last import's report;
 *   `apis.openapi_gz`: the imported document gzipped (a 45 MB document is written as about 3 MB);
 * - the endpoint FTS triggers re-aggregate every path of the listing per inserted row, so a 22,000-operation import
 *   did 22,000 full re-aggregations. They now skip listings named in `fts_deferred`: an import adds its listing
 *   there inside its transaction, writes the endpoints, then refreshes the listing's paths once and removes the row
 *   (control/providers/apis.service.ts), so no other reader ever sees the deferral.
 */
import { sql, type Kysely } from 'kysely';

const ENDPOINT_TRIGGERS = (guard: string) => [
  `CREATE TRIGGER endpoints_fts_ai AFTER INSERT ON endpoints ${guard} BEGIN
     UPDATE apis_fts SET paths = coalesce((SELECT group_concat(path, ' ') FROM endpoints WHERE api_id = new.api_id AND removed_at IS NULL), '')
     WHERE rowid = (SELECT rowid FROM apis WHERE id = new.api_id);
   END`,
  `CREATE TRIGGER endpoints_fts_au AFTER UPDATE OF path, removed_at ON endpoints ${guard} BEGIN
     UPDATE apis_fts SET paths = coalesce((SELECT group_concat(path, ' ') FROM endpoints WHERE api_id = new.api_id AND removed_at IS NULL), '')
     WHERE rowid = (SELECT rowid FROM apis WHERE id = new.api_id);
   END`,
];
const GUARD = 'WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE api_id = new.api_id)';

export async function up(db: Kysely<any>): Promise<void> {
  for (const s of [
    `ALTER TABLE apis ADD COLUMN schema_components_json TEXT NOT NULL DEFAULT '{}'`,
    `ALTER TABLE apis ADD COLUMN import_report_json TEXT`,
    `ALTER TABLE apis ADD COLUMN openapi_gz BLOB`,
    `CREATE TABLE fts_deferred (api_id TEXT PRIMARY KEY) WITHOUT ROWID`,
    'DROP TRIGGER IF EXISTS endpoints_fts_ai',
    'DROP TRIGGER IF EXISTS endpoints_fts_au',
    ...ENDPOINT_TRIGGERS(GUARD),
  ])
    await sql.raw(s).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const s of [
    'DROP TRIGGER IF EXISTS endpoints_fts_ai',
    'DROP TRIGGER IF EXISTS endpoints_fts_au',
    ...ENDPOINT_TRIGGERS(''),
    'DROP TABLE IF EXISTS fts_deferred',
    'ALTER TABLE apis DROP COLUMN openapi_gz',
    'ALTER TABLE apis DROP COLUMN import_report_json',
    'ALTER TABLE apis DROP COLUMN schema_components_json',
  ])
    await sql.raw(s).execute(db);
}
