/**
 * Calls refused with 428 `terms_not_accepted`, one row per (org, API): the dashboard's "terms awaiting acceptance"
 * (control/terms/pending-terms.service.ts) lists APIs an org tried to call but was refused, not only those it has
 * called. The gateway upserts a row at most once per (org, API, document) per process and window
 * (gateway/terms-refusals.ts), joined to its settle batch, so a refusal costs no commit of its own.
 * Built with the schema builder only, so it runs unchanged on PostgreSQL.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('terms_refusals')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('api_id', 'text', (c) => c.notNull())
    .addColumn('document_id', 'text', (c) => c.notNull())
    .addColumn('first_refused_at', 'bigint', (c) => c.notNull())
    .addColumn('last_refused_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('terms_refusals_pk', ['org_id', 'api_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('terms_refusals').execute();
}
