/**
 * Imports keep what used to be lost: a listing's named schema components (recursive or very large schemas, which
 * endpoint schemas reference as `#/components/schemas/<Name>`) and the report of its last import.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE apis ADD COLUMN schema_components_json TEXT NOT NULL DEFAULT '{}'`.execute(db);
  await sql`ALTER TABLE apis ADD COLUMN import_report_json TEXT`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE apis DROP COLUMN import_report_json`.execute(db);
  await sql`ALTER TABLE apis DROP COLUMN schema_components_json`.execute(db);
}
