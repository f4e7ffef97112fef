/**
 * Outbound webhooks (docs/webhooks.md): endpoints an org registers, the events svc emits for it (one row per event,
 * its `id` stable across retries so receivers can dedupe), one delivery per (event, endpoint) with its retry state,
 * and per-org alert settings (the low-balance threshold, email alerts, what was already announced).
 * Written with kysely's schema builder and portable column types, so it runs on PostgreSQL as well.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    // Space-separated event types, as scopes are stored.
    .addColumn('events', 'text', (c) => c.notNull())
    // AES-256-GCM with the data dir's secret key (core/crypto.ts), like upstream secrets: svc must sign with it.
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('enabled'))
    .addColumn('disabled_reason', 'text')
    // Start of the current run of failed attempts (null after a success): 3 days of it disable the endpoint.
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('webhook_endpoints_org').on('webhook_endpoints').columns(['org_id']).execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data_json', 'text', (c) => c.notNull())
    // What the event is about, unique per org and type, so a detector that runs again announces nothing twice.
    .addColumn('dedupe_key', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_events_dedupe')
    .on('webhook_events')
    .columns(['org_id', 'type', 'dedupe_key'])
    .unique()
    .execute();
  await db.schema.createIndex('webhook_events_org').on('webhook_events').columns(['org_id', 'created_at']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id'))
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id'))
    .addColumn('org_id', 'text', (c) => c.notNull())
    // pending → delivered | failed (gave up after 3 days, or the endpoint was disabled or deleted)
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_endpoint')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('org_alert_settings')
    .addColumn('org_id', 'text', (c) => c.primaryKey().references('orgs.id'))
    // null: 20 % of the org's last purchase (docs/webhooks.md)
    .addColumn('balance_low_cents', 'bigint')
    .addColumn('email_alerts', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['org_alert_settings', 'webhook_deliveries', 'webhook_events', 'webhook_endpoints'])
    await db.schema.dropTable(t).ifExists().execute();
}
