/**
 * The whole first schema: identity, keys, sessions, ledger, catalog, terms, usage, gateway leases, billing.
 * Money columns are INTEGER cents named *_cents; times are INTEGER ms UTC. Never import app types here.
 */
import { sql, type Kysely } from 'kysely';

const STATEMENTS = [
  // ---- identity
  `CREATE TABLE orgs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    origin TEXT NOT NULL CHECK (origin IN ('register','signup','login','admin')),
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','suspended')),
    status_reason TEXT,
    email TEXT,
    email_verified_at INTEGER,
    created_at INTEGER NOT NULL
  )`,
  `CREATE TABLE users (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name TEXT,
    role TEXT NOT NULL CHECK (role IN ('owner','admin')),
    email_verified_at INTEGER,
    created_at INTEGER NOT NULL,
    last_login_at INTEGER
  )`,
  `CREATE INDEX users_org ON users(org_id)`,
  `CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    created_by_user_id TEXT REFERENCES users(id),
    created_by_key_id TEXT,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    start TEXT NOT NULL,
    scopes TEXT NOT NULL,
    origin TEXT NOT NULL CHECK (origin IN ('register','created','oauth','admin')),
    approval_mode TEXT NOT NULL DEFAULT 'auto' CHECK (approval_mode IN ('auto','free_only')),
    budget_cents INTEGER CHECK (budget_cents >= 0),
    per_call_max_cents INTEGER CHECK (per_call_max_cents >= 0),
    daily_cap_cents INTEGER CHECK (daily_cap_cents >= 0),
    rate_limit_per_min INTEGER CHECK (rate_limit_per_min > 0),
    spent_cents INTEGER NOT NULL DEFAULT 0 CHECK (spent_cents >= 0),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    revoked_at INTEGER,
    last_used_at INTEGER
  )`,
  `CREATE INDEX api_keys_org ON api_keys(org_id)`,
  `CREATE TABLE key_daily_spend (
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    day INTEGER NOT NULL,
    spent_cents INTEGER NOT NULL DEFAULT 0 CHECK (spent_cents >= 0),
    PRIMARY KEY (key_id, day)
  ) WITHOUT ROWID`,
  `CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    token_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    ended_at INTEGER
  )`,
  `CREATE TABLE login_codes (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL COLLATE NOCASE,
    code_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    consumed_at INTEGER
  )`,
  `CREATE INDEX login_codes_email ON login_codes(email, created_at)`,
  `CREATE TABLE email_verifications (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    user_id TEXT REFERENCES users(id),
    email TEXT NOT NULL COLLATE NOCASE,
    token_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    consumed_at INTEGER
  )`,
  `CREATE TABLE outbox (
    id TEXT PRIMARY KEY,
    to_addr TEXT NOT NULL,
    subject TEXT NOT NULL,
    body_text TEXT NOT NULL,
    created_at INTEGER NOT NULL
  )`,
  // ---- cross-process change feed: the gateway polls it to drop cached keys, listings, balances
  `CREATE TABLE changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    entity TEXT NOT NULL CHECK (entity IN ('key','org','api','terms')),
    entity_id TEXT NOT NULL,
    created_at INTEGER NOT NULL
  )`,
  // ---- ledger (append-only; balances is its projection, written in the same transaction)
  `CREATE TABLE ledger_entries (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    key_id TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('signup_credit','starter_credit','purchase','auto_reload','call_charge','refund','adjustment')),
    status TEXT NOT NULL CHECK (status IN ('settled','pending')),
    amount_cents INTEGER NOT NULL,
    reason TEXT,
    ref_type TEXT,
    ref_id TEXT,
    idempotency_key TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
  )`,
  `CREATE INDEX ledger_org ON ledger_entries(org_id, created_at)`,
  `CREATE INDEX ledger_key ON ledger_entries(key_id, created_at)`,
  `CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
     BEGIN SELECT RAISE(ABORT, 'ledger_entries is append-only'); END`,
  `CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
     BEGIN SELECT RAISE(ABORT, 'ledger_entries is append-only'); END`,
  `CREATE TABLE balances (
    org_id TEXT PRIMARY KEY REFERENCES orgs(id),
    credit_cents INTEGER NOT NULL DEFAULT 0 CHECK (credit_cents >= 0),
    pending_cents INTEGER NOT NULL DEFAULT 0 CHECK (pending_cents >= 0),
    reserved_cents INTEGER NOT NULL DEFAULT 0 CHECK (reserved_cents >= 0 AND reserved_cents <= credit_cents),
    updated_at INTEGER NOT NULL
  )`,
  // ---- provider profile and listings
  `CREATE TABLE providers (
    org_id TEXT PRIMARY KEY REFERENCES orgs(id),
    slug TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    bio TEXT,
    website TEXT,
    logo_url TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  )`,
  `CREATE TABLE apis (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    category TEXT NOT NULL DEFAULT 'other',
    tags TEXT NOT NULL DEFAULT '[]',
    base_url TEXT,
    docs_url TEXT,
    logo_url TEXT,
    health_path TEXT,
    status TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft','live')),
    suspended_at INTEGER,
    suspended_reason TEXT,
    source_kind TEXT NOT NULL CHECK (source_kind IN ('openapi_url','rapidapi_url','body','demo')),
    source_url TEXT,
    openapi_json TEXT,
    secret_enc TEXT,
    secret_fingerprint TEXT,
    injection TEXT NOT NULL DEFAULT 'none' CHECK (injection IN ('none','bearer','header','query')),
    injection_name TEXT,
    published_at INTEGER,
    publish_terms_accepted_at INTEGER,
    last_verified_at INTEGER,
    last_verify_ok INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  )`,
  `CREATE INDEX apis_org ON apis(org_id)`,
  `CREATE TABLE endpoints (
    id TEXT PRIMARY KEY,
    api_id TEXT NOT NULL REFERENCES apis(id),
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    operation_id TEXT,
    summary TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    parameters_json TEXT NOT NULL DEFAULT '[]',
    request_schema_json TEXT,
    response_schema_json TEXT,
    price_cents INTEGER NOT NULL DEFAULT 0 CHECK (price_cents >= 0),
    discounts_json TEXT NOT NULL DEFAULT '[]',
    position INTEGER NOT NULL DEFAULT 0,
    removed_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (api_id, method, path)
  )`,
  `CREATE TABLE price_changes (
    id TEXT PRIMARY KEY,
    api_id TEXT NOT NULL REFERENCES apis(id),
    endpoint_id TEXT NOT NULL REFERENCES endpoints(id),
    old_price_cents INTEGER NOT NULL,
    new_price_cents INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('applied','pending','cancelled')),
    effective_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    cancelled_at INTEGER
  )`,
  `CREATE INDEX price_changes_endpoint ON price_changes(endpoint_id, created_at)`,
  `CREATE INDEX price_changes_pending ON price_changes(status, effective_at)`,
  `CREATE TABLE verifications (
    id TEXT PRIMARY KEY,
    api_id TEXT NOT NULL REFERENCES apis(id),
    ok INTEGER NOT NULL,
    results_json TEXT NOT NULL,
    created_at INTEGER NOT NULL
  )`,
  `CREATE TABLE legal_documents (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    api_id TEXT NOT NULL REFERENCES apis(id),
    kind TEXT NOT NULL CHECK (kind IN ('terms')),
    source TEXT NOT NULL CHECK (source IN ('hosted')),
    version TEXT NOT NULL,
    markdown TEXT NOT NULL,
    acceptance_mode TEXT NOT NULL CHECK (acceptance_mode IN ('required','optional')),
    status TEXT NOT NULL DEFAULT 'created' CHECK (status IN ('created','activated')),
    created_at INTEGER NOT NULL,
    activated_at INTEGER,
    UNIQUE (api_id, kind, version)
  )`,
  `CREATE TABLE terms_acceptances (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    api_id TEXT NOT NULL REFERENCES apis(id),
    document_id TEXT NOT NULL REFERENCES legal_documents(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    accepted_at INTEGER NOT NULL,
    UNIQUE (org_id, document_id)
  )`,
  `CREATE TABLE catalog_requests (
    id TEXT PRIMARY KEY,
    org_id TEXT,
    query TEXT NOT NULL,
    email TEXT,
    notes TEXT,
    created_at INTEGER NOT NULL
  )`,
  `CREATE TABLE activity (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('publish','unpublish','price_change','new_provider')),
    api_id TEXT,
    org_id TEXT,
    data_json TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
  )`,
  `CREATE INDEX activity_time ON activity(created_at)`,
  `CREATE TABLE leaderboard_entries (
    board TEXT NOT NULL,
    category TEXT NOT NULL,
    rank INTEGER NOT NULL,
    api_id TEXT NOT NULL REFERENCES apis(id),
    score REAL NOT NULL,
    computed_at INTEGER NOT NULL,
    PRIMARY KEY (board, category, rank)
  )`,
  // ---- usage: one row per metered gateway call, written by the gateway's group commit
  `CREATE TABLE usage_events (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    api_id TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    provider_org_id TEXT NOT NULL,
    method TEXT NOT NULL,
    status INTEGER NOT NULL,
    latency_ms INTEGER NOT NULL,
    price_cents INTEGER NOT NULL,
    charged_cents INTEGER NOT NULL,
    error_code TEXT,
    created_at INTEGER NOT NULL
  )`,
  `CREATE INDEX usage_org ON usage_events(org_id, created_at)`,
  `CREATE INDEX usage_api ON usage_events(api_id, created_at)`,
  `CREATE INDEX usage_key ON usage_events(key_id, created_at)`,
  // provider earnings ledger (append-only): per charged call gross, fee, net; payouts as negative net
  `CREATE TABLE provider_earnings (
    id TEXT PRIMARY KEY,
    provider_org_id TEXT NOT NULL,
    api_id TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('earning','payout','reversal')),
    gross_cents INTEGER NOT NULL,
    fee_cents INTEGER NOT NULL,
    net_cents INTEGER NOT NULL,
    ref_id TEXT,
    idempotency_key TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
  )`,
  `CREATE INDEX provider_earnings_org ON provider_earnings(provider_org_id, created_at)`,
  `CREATE TRIGGER provider_earnings_no_update BEFORE UPDATE ON provider_earnings
     BEGIN SELECT RAISE(ABORT, 'provider_earnings is append-only'); END`,
  `CREATE TRIGGER provider_earnings_no_delete BEFORE DELETE ON provider_earnings
     BEGIN SELECT RAISE(ABORT, 'provider_earnings is append-only'); END`,
  // ---- gateway: process registry, balance/cap leases, idempotent call records
  `CREATE TABLE gateway_instances (
    id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    stopped_at INTEGER
  )`,
  `CREATE TABLE balance_leases (
    id TEXT PRIMARY KEY,
    holder_id TEXT NOT NULL,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    day INTEGER NOT NULL,
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    spent_cents INTEGER NOT NULL DEFAULT 0 CHECK (spent_cents >= 0 AND spent_cents <= amount_cents),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    released_at INTEGER
  )`,
  `CREATE INDEX balance_leases_open ON balance_leases(holder_id) WHERE released_at IS NULL`,
  `CREATE INDEX balance_leases_key ON balance_leases(key_id, day) WHERE released_at IS NULL`,
  `CREATE TABLE idempotency_records (
    org_id TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    request_id TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('in_flight','done')),
    holder_id TEXT NOT NULL,
    response_status INTEGER,
    response_headers_json TEXT,
    response_body BLOB,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (org_id, idem_key)
  ) WITHOUT ROWID`,
  // ---- billing
  `CREATE TABLE billing_accounts (
    org_id TEXT PRIMARY KEY REFERENCES orgs(id),
    processor TEXT NOT NULL CHECK (processor IN ('stripe','test')),
    customer_id TEXT,
    payment_method_id TEXT,
    card_brand TEXT,
    card_last4 TEXT,
    auto_reload_enabled INTEGER NOT NULL DEFAULT 0,
    auto_reload_threshold_cents INTEGER,
    auto_reload_amount_cents INTEGER,
    auto_reload_failures INTEGER NOT NULL DEFAULT 0,
    auto_reload_paused_at INTEGER,
    updated_at INTEGER NOT NULL
  )`,
  `CREATE TABLE payments (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    kind TEXT NOT NULL CHECK (kind IN ('checkout','auto_reload','setup')),
    processor TEXT NOT NULL CHECK (processor IN ('stripe','test')),
    processor_ref TEXT UNIQUE,
    pack_id TEXT,
    amount_paid_cents INTEGER NOT NULL DEFAULT 0,
    credit_cents INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('open','succeeded','failed','expired')),
    failure_reason TEXT,
    trigger_ref TEXT UNIQUE,
    created_at INTEGER NOT NULL,
    completed_at INTEGER
  )`,
  `CREATE INDEX payments_org ON payments(org_id, created_at)`,
  `CREATE TABLE processor_events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    outcome TEXT NOT NULL
  )`,
  `CREATE TABLE connect_accounts (
    org_id TEXT PRIMARY KEY REFERENCES orgs(id),
    processor TEXT NOT NULL CHECK (processor IN ('stripe','test')),
    account_id TEXT NOT NULL UNIQUE,
    details_submitted INTEGER NOT NULL DEFAULT 0,
    payouts_enabled INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL
  )`,
  `CREATE TABLE payouts (
    id TEXT PRIMARY KEY,
    provider_org_id TEXT NOT NULL REFERENCES orgs(id),
    period TEXT NOT NULL,
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    status TEXT NOT NULL CHECK (status IN ('pending','paid','failed')),
    transfer_id TEXT,
    failure_reason TEXT,
    created_at INTEGER NOT NULL,
    completed_at INTEGER,
    UNIQUE (provider_org_id, period)
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const s of STATEMENTS) await sql.raw(s).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const tables = [...STATEMENTS.join('\n').matchAll(/CREATE TABLE (\w+)/g)].map((m) => m[1]).reverse();
  for (const t of tables) await sql.raw(`DROP TABLE IF EXISTS ${t}`).execute(db);
}
