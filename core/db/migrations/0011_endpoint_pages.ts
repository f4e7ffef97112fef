/**
 * A listing's current endpoints in document order, by index: an import's answer (its first page and count) and
 * `GET /v1/provider/apis/:api_id/endpoints` read one page, where before every row of the listing was read and sorted
 * (a 22,000-endpoint listing's rows carry tens of MB of schemas: about a second on the control plane's event loop).
 * The count of current endpoints is answered from the index alone.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX endpoints_api_current_order ON endpoints(api_id, removed_at, position, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX endpoints_api_current_order`.execute(db);
}
