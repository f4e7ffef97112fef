/**
 * The one place that lists svc's tables (typed once for kysely) and opens the store: the shared SQLite file
 * (default), or PostgreSQL when SVC_DATABASE_URL is set (openStore; docs/scale-out.md).
 * SQLite: every process opens its own connection: WAL, foreign keys on, a busy timeout so writers queue, not fail.
 */
import Sqlite from './sqlite-driver.js';
import pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type Transaction,
  type TransactionBuilder,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  type Generated,
  type Insertable,
  type Selectable,
  type Updateable,
} from 'kysely';
import { LRUCache } from 'lru-cache';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { retrySerializable, type StoreDialect } from './dialect.js';

type Ms = number;

export interface OrgsTable {
  id: string;
  name: string;
  origin: 'register' | 'signup' | 'login' | 'admin';
  status: Generated<'active' | 'suspended'>;
  status_reason: string | null;
  email: string | null;
  email_verified_at: Ms | null;
  created_at: Ms;
}

export interface UsersTable {
  id: string;
  org_id: string;
  email: string;
  name: string | null;
  role: 'owner' | 'admin';
  email_verified_at: Ms | null;
  created_at: Ms;
  last_login_at: Ms | null;
}

export type ApprovalMode = 'auto' | 'free_only';

export interface ApiKeysTable {
  id: string;
  org_id: string;
  created_by_user_id: string | null;
  created_by_key_id: string | null;
  name: string;
  /** sha256 hex of the plaintext key; the plaintext is shown once and never stored. */
  key_hash: string;
  /** First characters of the key, for display (`svc_live_AbCd…`). */
  start: string;
  /** Space-separated scopes. */
  scopes: string;
  origin: 'register' | 'created' | 'oauth' | 'admin';
  approval_mode: Generated<ApprovalMode>;
  budget_cents: number | null;
  per_call_max_cents: number | null;
  daily_cap_cents: number | null;
  rate_limit_per_min: number | null;
  /** Lifetime call charges on this key: projection of call_charge entries, written with them. */
  spent_cents: Generated<number>;
  created_at: Ms;
  updated_at: Ms;
  revoked_at: Ms | null;
  last_used_at: Ms | null;
}

export interface KeyDailySpendTable {
  key_id: string;
  /** UTC day number (ms / 86_400_000). */
  day: number;
  spent_cents: Generated<number>;
}

export interface SessionsTable {
  id: string;
  org_id: string;
  user_id: string;
  token_hash: string;
  created_at: Ms;
  expires_at: Ms;
  ended_at: Ms | null;
}

export interface LoginCodesTable {
  id: string;
  email: string;
  code_hash: string;
  created_at: Ms;
  expires_at: Ms;
  attempts: Generated<number>;
  consumed_at: Ms | null;
}

/** `svc login` by browser or device code (control/sessions/cli-login.service.ts). */
export interface CliLoginsTable {
  id: string;
  kind: 'code' | 'device';
  secret_hash: string;
  user_code_hash: string | null;
  code_challenge: string | null;
  redirect_uri: string | null;
  org_id: string | null;
  user_id: string | null;
  created_at: Ms;
  expires_at: Ms;
  confirmed_at: Ms | null;
  consumed_at: Ms | null;
}

export interface EmailVerificationsTable {
  id: string;
  org_id: string;
  user_id: string | null;
  email: string;
  token_hash: string;
  created_at: Ms;
  expires_at: Ms;
  consumed_at: Ms | null;
}

export interface OutboxTable {
  id: string;
  to_addr: string;
  subject: string;
  body_text: string;
  created_at: Ms;
}

export type ChangeEntity = 'key' | 'org' | 'api' | 'terms';

export interface ChangesTable {
  seq: Generated<number>;
  entity: ChangeEntity;
  entity_id: string;
  created_at: Ms;
}

export type LedgerKind =
  | 'signup_credit'
  | 'starter_credit'
  | 'purchase'
  | 'auto_reload'
  | 'call_charge'
  | 'refund'
  | 'adjustment';

export interface LedgerEntriesTable {
  id: string;
  org_id: string;
  key_id: string | null;
  kind: LedgerKind;
  /** Pending entries (withheld signup credit) do not count in credit_cents until settled by a later entry. */
  status: 'settled' | 'pending';
  /** Signed: credits positive, charges negative. */
  amount_cents: number;
  reason: string | null;
  ref_type: string | null;
  ref_id: string | null;
  idempotency_key: string;
  created_at: Ms;
}

export interface BalancesTable {
  org_id: string;
  /** Always equals the sum of the org's settled ledger entries. */
  credit_cents: Generated<number>;
  /** Withheld (pending) credit, e.g. signup credit awaiting email verification. */
  pending_cents: Generated<number>;
  /** Part of credit_cents leased to gateway processes and not yet spent (gateway/README.md). */
  reserved_cents: Generated<number>;
  updated_at: Ms;
}

export interface ProvidersTable {
  org_id: string;
  slug: string;
  display_name: string;
  bio: string | null;
  website: string | null;
  logo_url: string | null;
  created_at: Ms;
  updated_at: Ms;
}

export type Injection = 'none' | 'bearer' | 'header' | 'query';

export interface ApisTable {
  id: string;
  org_id: string;
  slug: string;
  name: string;
  summary: Generated<string>;
  description: Generated<string>;
  category: Generated<string>;
  /** JSON array of strings. */
  tags: Generated<string>;
  base_url: string | null;
  docs_url: string | null;
  logo_url: string | null;
  health_path: string | null;
  status: Generated<'draft' | 'live'>;
  suspended_at: Ms | null;
  suspended_reason: string | null;
  source_kind: 'openapi_url' | 'rapidapi_url' | 'body' | 'demo';
  source_url: string | null;
  /** The imported document as JSON text (listings imported before migration 0007; later ones use openapi_gz). */
  openapi_json: string | null;
  /** The imported document, gzipped JSON (control/catalog/stored-document.ts reads either form). */
  openapi_gz: Buffer | null;
  /** JSON object of named schema components that endpoint schemas reference (core/schema-refs.ts). */
  schema_components_json: Generated<string>;
  /** JSON ImportReport of the last import (control/catalog/openapi-import.ts); null for seeded listings. */
  import_report_json: string | null;
  /** AES-256-GCM ciphertext of the upstream secret (core/crypto.ts); never returned. */
  secret_enc: string | null;
  secret_fingerprint: string | null;
  injection: Generated<Injection>;
  injection_name: string | null;
  published_at: Ms | null;
  publish_terms_accepted_at: Ms | null;
  last_verified_at: Ms | null;
  last_verify_ok: number | null;
  created_at: Ms;
  updated_at: Ms;
}

export interface EndpointsTable {
  id: string;
  api_id: string;
  method: string;
  /** Path template relative to the listing's base URL, e.g. `/users/{id}`. */
  path: string;
  operation_id: string | null;
  summary: Generated<string>;
  description: Generated<string>;
  parameters_json: Generated<string>;
  request_schema_json: string | null;
  response_schema_json: string | null;
  price_cents: Generated<number>;
  /** JSON array of volume tiers, see control/pricing/README.md. */
  discounts_json: Generated<string>;
  position: Generated<number>;
  removed_at: Ms | null;
  created_at: Ms;
  updated_at: Ms;
}

export interface PriceChangesTable {
  id: string;
  api_id: string;
  endpoint_id: string;
  old_price_cents: number;
  new_price_cents: number;
  status: 'applied' | 'pending' | 'cancelled';
  effective_at: Ms;
  created_at: Ms;
  cancelled_at: Ms | null;
  /** JSON discount tiers before/after (0002_catalog); null when the change left discounts alone. */
  old_discounts_json: string | null;
  new_discounts_json: string | null;
}

export interface VerificationsTable {
  id: string;
  api_id: string;
  ok: number;
  results_json: string;
  created_at: Ms;
}

export interface LegalDocumentsTable {
  id: string;
  org_id: string;
  api_id: string;
  kind: 'terms';
  source: 'hosted';
  version: string;
  markdown: string;
  acceptance_mode: 'required' | 'optional';
  status: Generated<'created' | 'activated'>;
  created_at: Ms;
  activated_at: Ms | null;
}

export interface TermsAcceptancesTable {
  id: string;
  org_id: string;
  api_id: string;
  document_id: string;
  user_id: string;
  accepted_at: Ms;
}

export interface CatalogRequestsTable {
  id: string;
  org_id: string | null;
  query: string;
  email: string | null;
  notes: string | null;
  created_at: Ms;
}

export interface ActivityTable {
  id: string;
  kind: 'publish' | 'unpublish' | 'price_change' | 'new_provider';
  api_id: string | null;
  org_id: string | null;
  data_json: Generated<string>;
  created_at: Ms;
}

export interface LeaderboardEntriesTable {
  board: string;
  /** '' for the all-categories board. */
  category: string;
  rank: number;
  api_id: string;
  score: number;
  computed_at: Ms;
}

/** Text id → small integer, append-only (0022_narrow_usage): the nums the usage row stores instead of text ids. */
export interface IdNumsTable {
  num: Generated<number>;
  /** Any text id: `org_…`, `key_…`, `api_…`, `ep_…`. */
  id: string;
}

/** One row per gateway call, integer-keyed and narrow (0022_narrow_usage; docs/gateway.md "The usage row"). */
export interface UsageCallsTable {
  /** The gateway request id (`req_…`, X-Svc-Request-Id): the key, so a call has at most one row. */
  request_id: string;
  /** id_nums.num of the consumer org, its key, the API, the endpoint and the provider org credited. */
  org_num: number;
  key_num: number;
  api_num: number;
  endpoint_num: number;
  provider_num: number;
  method: string;
  status: number;
  latency_ms: number;
  price_cents: number;
  charged_cents: number;
  error_code: string | null;
  created_at: Ms;
}

export interface ProviderEarningsTable {
  id: string;
  provider_org_id: string;
  api_id: string | null;
  kind: 'earning' | 'payout' | 'reversal';
  gross_cents: number;
  fee_cents: number;
  net_cents: number;
  ref_id: string | null;
  idempotency_key: string;
  created_at: Ms;
}

export interface GatewayInstancesTable {
  id: string;
  pid: number;
  /** Host identity (hostname and boot id, gateway/instances.ts): pids are only compared on the same host. */
  host: Generated<string>;
  started_at: Ms;
  heartbeat_at: Ms;
  stopped_at: Ms | null;
}

export interface BalanceLeasesTable {
  id: string;
  holder_id: string;
  org_id: string;
  key_id: string;
  day: number;
  amount_cents: number;
  spent_cents: Generated<number>;
  /** Settled spend not yet folded into balances/api_keys/key_daily_spend (PostgreSQL store; 0 on SQLite). */
  unfolded_cents: Generated<number>;
  created_at: Ms;
  expires_at: Ms;
  released_at: Ms | null;
}

export interface IdempotencyRecordsTable {
  org_id: string;
  idem_key: string;
  request_hash: string;
  request_id: string;
  state: 'in_flight' | 'done';
  holder_id: string;
  response_status: number | null;
  response_headers_json: string | null;
  response_body: Buffer | null;
  created_at: Ms;
  expires_at: Ms;
}

export type Processor = 'stripe' | 'test';

export interface BillingAccountsTable {
  org_id: string;
  processor: Processor;
  customer_id: string | null;
  payment_method_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
  auto_reload_enabled: Generated<number>;
  auto_reload_threshold_cents: number | null;
  auto_reload_amount_cents: number | null;
  auto_reload_failures: Generated<number>;
  auto_reload_paused_at: Ms | null;
  updated_at: Ms;
  /** Processor-side creation time of the setup behind the saved card (0003): older setups never replace it. */
  card_setup_created_at: Generated<Ms | null>;
}

export interface PaymentsTable {
  id: string;
  org_id: string;
  kind: 'checkout' | 'auto_reload' | 'setup';
  processor: Processor;
  processor_ref: string | null;
  pack_id: string | null;
  amount_paid_cents: Generated<number>;
  credit_cents: Generated<number>;
  status: 'open' | 'succeeded' | 'failed' | 'expired';
  failure_reason: string | null;
  /** What caused an off-session charge (e.g. the auto-reload dip), unique so one dip charges once. */
  trigger_ref: string | null;
  created_at: Ms;
  completed_at: Ms | null;
}

export interface ProcessorEventsTable {
  id: string;
  type: string;
  received_at: Ms;
  outcome: string;
}

export interface ConnectAccountsTable {
  org_id: string;
  processor: Processor;
  account_id: string;
  details_submitted: Generated<number>;
  payouts_enabled: Generated<number>;
  updated_at: Ms;
}

export interface PayoutsTable {
  id: string;
  provider_org_id: string;
  period: string;
  amount_cents: number;
  status: 'pending' | 'paid' | 'failed';
  transfer_id: string | null;
  failure_reason: string | null;
  created_at: Ms;
  completed_at: Ms | null;
}

export interface WebhookEndpointsTable {
  id: string;
  org_id: string;
  url: string;
  description: string | null;
  /** Space-separated event types. */
  events: string;
  secret_enc: string;
  status: Generated<'enabled' | 'disabled'>;
  disabled_reason: string | null;
  failing_since: Ms | null;
  created_at: Ms;
  updated_at: Ms;
  deleted_at: Ms | null;
}

export interface WebhookEventsTable {
  id: string;
  org_id: string;
  type: string;
  data_json: string;
  dedupe_key: string | null;
  created_at: Ms;
}

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  org_id: string;
  status: Generated<'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Ms;
  last_attempt_at: Ms | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Ms | null;
  created_at: Ms;
}

export interface OrgAlertSettingsTable {
  org_id: string;
  balance_low_cents: number | null;
  email_alerts: Generated<number>;
  updated_at: Ms;
}

export interface Database {
  orgs: OrgsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  key_daily_spend: KeyDailySpendTable;
  sessions: SessionsTable;
  login_codes: LoginCodesTable;
  cli_logins: CliLoginsTable;
  email_verifications: EmailVerificationsTable;
  outbox: OutboxTable;
  changes: ChangesTable;
  ledger_entries: LedgerEntriesTable;
  balances: BalancesTable;
  providers: ProvidersTable;
  apis: ApisTable;
  endpoints: EndpointsTable;
  price_changes: PriceChangesTable;
  verifications: VerificationsTable;
  legal_documents: LegalDocumentsTable;
  terms_acceptances: TermsAcceptancesTable;
  catalog_requests: CatalogRequestsTable;
  activity: ActivityTable;
  leaderboard_entries: LeaderboardEntriesTable;
  id_nums: IdNumsTable;
  usage_calls: UsageCallsTable;
  provider_earnings: ProviderEarningsTable;
  gateway_instances: GatewayInstancesTable;
  balance_leases: BalanceLeasesTable;
  idempotency_records: IdempotencyRecordsTable;
  billing_accounts: BillingAccountsTable;
  payments: PaymentsTable;
  processor_events: ProcessorEventsTable;
  connect_accounts: ConnectAccountsTable;
  payouts: PayoutsTable;
  api_stats: ApiStatsTable;
  listing_search: ListingSearchTable;
  search_changes: SearchChangesTable;
  terms_refusals: TermsRefusalsTable;
  oauth_clients: OAuthClientsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_codes: OAuthCodesTable;
  oauth_tokens: OAuthTokensTable;
  oauth_step_ups: OAuthStepUpsTable;
  mcp_sessions: McpSessionsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  org_alert_settings: OrgAlertSettingsTable;
  console_keys: ConsoleKeysTable;
}

/** The web console's key of an org (0023_console_keys): which `api_keys` row, and its plaintext encrypted with the server key. */
export interface ConsoleKeysTable {
  org_id: string;
  key_id: string;
  /** `encryptSecret(secretKey, plaintext)` (core/crypto.ts); never leaves the control plane. */
  key_secret: string;
  created_at: Ms;
}

/** Per-listing usage aggregates over 30 days, materialized by the leaderboard job (0002_catalog). */
export interface ApiStatsTable {
  api_id: string;
  calls_30d: number;
  success_30d: number;
  orgs_30d: number;
  gross_30d_cents: number;
  computed_at: Ms;
}

/**
 * Catalog search index: one row per live, unsuspended listing (rowid = apis.rowid), kept by triggers (0010).
 * Read-only for application code.
 */
export interface ListingSearchTable {
  api_id: string;
  category: string;
  /** `apis.published_at` (0 when unset). */
  published_at: Ms;
  /** Cheapest current endpoint price; null when the listing has no current endpoint (then it is not searchable). */
  min_price_cents: number | null;
  orgs_30d: number;
  calls_30d: number;
  /** 30-day success rate when calls_30d >= 10, else -1. */
  reliability: number;
}

/** Listings whose search text or row changed, for the in-memory search index (0013_search_changes). */
export interface SearchChangesTable {
  seq: Generated<number>;
  /** The listing's rowid (`apis.rowid` = `apis_fts.rowid` = `listing_search.rowid`). */
  doc: number;
  /** 1 when the FTS text may have changed, 0 when only the `listing_search` row did. */
  text: 0 | 1;
}

/** Calls refused with 428 terms_not_accepted, one row per (org, API) (0014_terms_refusals). */
export interface TermsRefusalsTable {
  org_id: string;
  api_id: string;
  /** The required document the refused call lacked an acceptance of. */
  document_id: string;
  first_refused_at: Ms;
  last_refused_at: Ms;
}

/** OAuth clients: dynamically registered (RFC 7591) or a fetched Client ID Metadata Document (0009_oauth). */
export interface OAuthClientsTable {
  /** `oc_…` for a registered client; the https URL itself for a metadata document. */
  id: string;
  kind: 'registered' | 'metadata_document';
  /** Self-asserted by the client: always shown as unverified. */
  client_name: string | null;
  /** JSON array of exact redirect URIs. */
  redirect_uris: string;
  /** JSON: the registration request or the fetched document, as accepted. */
  metadata: string;
  created_at: Ms;
  /** Metadata documents: when the cached copy was fetched. */
  fetched_at: Ms | null;
}

/** One approval by a person: a client may act as `key_id` on `resource`. Revoking it ends every token of the family. */
export interface OAuthGrantsTable {
  id: string;
  client_id: string;
  org_id: string;
  user_id: string;
  key_id: string;
  /** 1 when approval minted the key (revoked with the grant); 0 when it elevated an existing key. */
  key_minted: 0 | 1;
  /** The minted key's plaintext, AES-256-GCM under the secret key: the MCP server needs it to call the gateway. */
  key_secret: string | null;
  /** RFC 8707 resource the tokens are bound to, e.g. `{mcp_url}/mcp`. */
  resource: string;
  scope: string;
  created_at: Ms;
  revoked_at: Ms | null;
  revoked_reason: string | null;
}

export interface OAuthCodesTable {
  code_hash: string;
  grant_id: string;
  redirect_uri: string;
  /** PKCE S256 challenge (base64url sha256 of the verifier). */
  code_challenge: string;
  created_at: Ms;
  expires_at: Ms;
  consumed_at: Ms | null;
}

export interface OAuthTokensTable {
  token_hash: string;
  kind: 'access' | 'refresh';
  grant_id: string;
  created_at: Ms;
  expires_at: Ms;
  /** Refresh tokens: when it was exchanged for a new pair; presenting it again revokes the grant. */
  rotated_at: Ms | null;
  revoked_at: Ms | null;
}

/** A 2025-11-25-era MCP session (0008_mcp_sessions); the id itself is never stored. */
export interface McpSessionsTable {
  /** sha256 hex of the Mcp-Session-Id. */
  id_hash: string;
  /** The key bound to the session (Authorization on initialize, or svc_register / provision_access inside it). */
  key_id: string | null;
  /** That key, AES-256-GCM with the data dir's secret key (`v1:…`); the gateway needs the plaintext. */
  key_secret: string | null;
  protocol_version: string;
  created_at: Ms;
  last_used_at: Ms;
  /** last_used_at + 30 days; swept by the MCP process. */
  expires_at: Ms;
}

/**
 * A one-time link from an MCP client's insufficient_scope answer to the registered key it holds, so the person's
 * approval can elevate that same key (control/oauth/step-up.ts).
 */
export interface OAuthStepUpsTable {
  handle_hash: string;
  key_id: string;
  /** The key's plaintext, AES-256-GCM under the secret key; moves to the grant on approval. */
  key_secret: string;
  created_at: Ms;
  expires_at: Ms;
  consumed_at: Ms | null;
}

export type Row<T extends keyof Database> = Selectable<Database[T]>;
export type NewRow<T extends keyof Database> = Insertable<Database[T]>;
export type RowPatch<T extends keyof Database> = Updateable<Database[T]>;

export type Db = Kysely<Database>;

/** Both handles on one connection: kysely for typed queries, the raw handle for hot-path prepared statements. */
export interface DbHandles {
  /** Optional so that objects carrying `db` and `sqlite` (AppContext, test fixtures) still fit. */
  dialect?: 'sqlite';
  db: Db;
  sqlite: Sqlite.Database;
  close(): Promise<void>;
}

/** PostgreSQL: kysely over a `pg` pool; `pool` for the raw-SQL paths (gateway hot path, LISTEN). */
export interface PgHandles {
  dialect: 'postgres';
  db: Db;
  pool: pg.Pool;
  url: string;
  close(): Promise<void>;
}

export type StoreHandles = DbHandles | PgHandles;

/** Where a process's data lives: the SQLite file, unless a PostgreSQL URL is configured. */
export interface StoreTarget {
  dbFile: string;
  databaseUrl?: string | undefined;
}

export function storeDialect(target: StoreTarget): StoreDialect {
  return target.databaseUrl ? 'postgres' : 'sqlite';
}

/** Opens the configured store (SVC_DATABASE_URL, else the SQLite file). */
export function openStore(target: StoreTarget, opts: PgPoolOptions = {}): StoreHandles {
  return target.databaseUrl ? openPostgres(target.databaseUrl, opts) : openDatabase(target.dbFile);
}

export function openSqlite(file: string): Sqlite.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new Sqlite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  return sqlite;
}

/**
 * Every kysely transaction in svc is BEGIN IMMEDIATE: it takes the write lock up front, so a read-then-write
 * money check in one process can never interleave with another process's (and never fails mid-way on upgrade).
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #database: SqliteDatabase;
  constructor(database: Sqlite.Database) {
    const cached = withStatementCache(database);
    super({ database: cached });
    this.#database = cached;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver({ database: this.#database });
  }
}

/** How many distinct SQL texts keep their prepared statement per connection (kysely's queries are a fixed set). */
export const STATEMENT_CACHE_SIZE = 512;

/**
 * kysely's SQLite driver prepares every query anew; parsing and planning the SQL was the largest single cost of a
 * control-plane read (a profile of GET /v1/billing/balance). Statements are reusable, and kysely runs one query at a
 * time per connection (its connection mutex, held through a stream), so one cached statement per SQL text is safe.
 * Least recently used texts are finalized past STATEMENT_CACHE_SIZE (dynamic IN-lists make new texts).
 */
export function withStatementCache(sqlite: Sqlite.Database, size = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const statements = new LRUCache<string, Sqlite.Statement>({ max: size });
  return {
    close: () => {
      statements.clear();
      sqlite.close();
    },
    prepare: (sql: string) => {
      let stmt = statements.get(sql);
      if (!stmt) {
        stmt = sqlite.prepare(sql);
        statements.set(sql, stmt);
      }
      return stmt;
    },
  };
}

export function openDatabase(file: string): DbHandles {
  const sqlite = openSqlite(file);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect(sqlite) });
  return {
    dialect: 'sqlite',
    db,
    sqlite,
    async close() {
      await db.destroy();
    },
  };
}

// ---- PostgreSQL

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * `pg` returns int8 (bigint columns: cents, ms times; `count(*)`) and numeric (`sum()` of bigint) as strings.
 * svc's values are integers below 2^53 (cents, ms, counts), so both parse to Number; a value past the safe range
 * fails loudly instead of rounding money.
 */
function _toSafeNumber(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) && !(Number.isFinite(n) && !/^-?\d+$/.test(text)))
    throw new RangeError(`integer ${text} from PostgreSQL is past Number.MAX_SAFE_INTEGER`);
  return n;
}

export const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8_OID || oid === NUMERIC_OID) return _toSafeNumber;
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};

export interface PgPoolOptions {
  /** Pool size (default 10). */
  max?: number;
  /** Name shown in pg_stat_activity. */
  applicationName?: string;
}

/** A `pg` pool with svc's type parsers and session settings (UTC, no statement runs forever holding locks). */
export function createPgPool(url: string, opts: PgPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    types: PG_TYPES,
    application_name: opts.applicationName ?? 'svc',
    // A partitioned client's open transaction must not hold row locks forever (scale-out-notes §2.1).
    options: '-c TimeZone=UTC -c idle_in_transaction_session_timeout=30000 -c lock_timeout=10000',
    keepAlive: true,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client that loses its server emits here; without a listener that would crash the process.
  pool.on('error', () => {});
  return pool;
}

/**
 * kysely on PostgreSQL where every `db.transaction()` is SERIALIZABLE and re-run on a serialization failure
 * (SQLSTATE 40001) or deadlock: SQLite's BEGIN IMMEDIATE made every read-then-write check atomic, and
 * READ COMMITTED would silently permit lost updates (two payouts, two auto-reloads). A transaction callback may
 * therefore run more than once: it must only touch the database (no mail, no processor calls inside).
 */
class SerializableKysely extends Kysely<Database> {
  override transaction(): TransactionBuilder<Database> {
    const builder = super.transaction().setIsolationLevel('serializable');
    return new Proxy(builder, {
      get(target, prop, receiver) {
        if (prop === 'execute')
          return <T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> =>
            retrySerializable(() => target.execute(fn));
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
}

export function openPostgres(url: string, opts: PgPoolOptions = {}): PgHandles {
  const pool = createPgPool(url, opts);
  const db = new SerializableKysely({ dialect: new PostgresDialect({ pool }) });
  return {
    dialect: 'postgres',
    db,
    pool,
    url,
    async close() {
      await db.destroy();
    },
  };
}
