/**
 * Static migration record for kysely's Migrator: numbered files, applied in name order.
 * PostgreSQL starts from one baseline equal to SQLite's schema after 0013 (pg/0001_baseline.ts), recorded under the
 * same names so both stores share one history; from 0014 on, every migration runs on both (write them with
 * kysely's schema builder, or per dialect through core/db/dialect.ts).
 */
import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';
import * as m0001 from './0001_init.js';
import * as m0002 from './0002_catalog.js';
import * as m0003 from './0003_billing.js';
import * as m0004 from './0004_drop_unused_key_indexes.js';
import * as m0005 from './0005_lean_call_rows.js';
import * as m0006 from './0006_cli_logins.js';
import * as m0007 from './0007_import_components.js';
import * as m0008 from './0008_mcp_sessions.js';
import * as m0009 from './0009_oauth.js';
import * as m0010 from './0010_listing_search.js';
import * as m0011 from './0011_endpoint_pages.js';
import * as m0012 from './0012_search_answer_version.js';
import * as m0013 from './0013_search_changes.js';
import * as m0014 from './0014_terms_refusals.js';
import * as m0020 from './0020_webhooks.js';
import * as m0021 from './0021_gateway_fleet.js';
import * as m0022 from './0022_narrow_usage.js';
import * as m0023 from './0023_console_keys.js';
import * as m0024 from './0024_leaderboard_api_index.js';
import * as pgBaseline from './pg/0001_baseline.js';

export const migrations: Record<string, Migration> = {
  '0001_init': m0001,
  '0002_catalog': m0002,
  '0003_billing': m0003,
  '0004_drop_unused_key_indexes': m0004,
  '0005_lean_call_rows': m0005,
  '0006_cli_logins': m0006,
  '0007_import_components': m0007,
  '0008_mcp_sessions': m0008,
  '0009_oauth': m0009,
  '0010_listing_search': m0010,
  '0011_endpoint_pages': m0011,
  '0012_search_answer_version': m0012,
  '0013_search_changes': m0013,
  '0014_terms_refusals': m0014,
  '0020_webhooks': m0020,
  '0021_gateway_fleet': m0021,
  '0022_narrow_usage': m0022,
  '0023_console_keys': m0023,
  '0024_leaderboard_api_index': m0024,
};

/** The last SQLite migration PostgreSQL's baseline stands for. */
const PG_BASELINE_THROUGH = '0013_search_changes';

const noop: Migration = { async up(_db: Kysely<any>) {} };

/** The migrations of a store: SQLite's as listed; on PostgreSQL the baseline, then the shared ones after it. */
export function migrationsFor(dialect: StoreDialect): Record<string, Migration> {
  if (dialect === 'sqlite') return migrations;
  const out: Record<string, Migration> = {};
  for (const name of Object.keys(migrations).sort()) {
    if (name === '0001_init') out[name] = pgBaseline;
    else if (name <= PG_BASELINE_THROUGH) out[name] = noop;
    else out[name] = migrations[name]!;
  }
  return out;
}
