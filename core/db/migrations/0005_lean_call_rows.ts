/**
 * Fewer b-tree pages per metered call. Every paid call commits a usage row, a ledger entry and a provider
 * earning, and SQLite writes each b-tree page a commit touches to the WAL (two write syscalls per page), so
 * pages per commit set the gateway's cost per call. This migration takes 18 pages down to 12, and changes no
 * column or meaning:
 * - usage_events, ledger_entries and provider_earnings become WITHOUT ROWID tables keyed by their text id
 *   (one b-tree instead of a rowid table plus a primary-key index);
 * - the idempotency_key UNIQUE index skips the rows the gateway writes per call (call_charge / earning): those
 *   are unique already through usage_events.id, written in the same transaction (their keys stay filled in);
 * - usage_provider goes: provider analytics reach a provider's usage through usage_api (its own api ids).
 */
import { sql, type Kysely } from 'kysely';

const USAGE = `(
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
  )`;

const LEDGER = (unique: string) => `(
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    key_id TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('signup_credit','starter_credit','purchase','auto_reload','call_charge','refund','adjustment')),
    status TEXT NOT NULL CHECK (status IN ('settled','pending')),
    amount_cents INTEGER NOT NULL,
    reason TEXT,
    ref_type TEXT,
    ref_id TEXT,
    idempotency_key TEXT NOT NULL${unique},
    created_at INTEGER NOT NULL
  )`;

const EARNINGS = (unique: string) => `(
    id TEXT PRIMARY KEY,
    provider_org_id TEXT NOT NULL,
    api_id TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('earning','payout','reversal')),
    gross_cents INTEGER NOT NULL,
    fee_cents INTEGER NOT NULL,
    net_cents INTEGER NOT NULL,
    ref_id TEXT,
    idempotency_key TEXT NOT NULL${unique},
    created_at INTEGER NOT NULL
  )`;

const APPEND_ONLY = (table: string) => [
  `CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table} BEGIN SELECT RAISE(ABORT, '${table} is append-only'); END`,
  `CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table} BEGIN SELECT RAISE(ABORT, '${table} is append-only'); END`,
];

/** Copies `table` into a new definition, then swaps it in (indexes and triggers are recreated by the caller). */
async function rebuild(db: Kysely<any>, table: string, definition: string): Promise<void> {
  await sql.raw(`CREATE TABLE ${table}__new ${definition}`).execute(db);
  await sql.raw(`INSERT INTO ${table}__new SELECT * FROM ${table}`).execute(db);
  await sql.raw(`DROP TABLE ${table}`).execute(db);
  await sql.raw(`ALTER TABLE ${table}__new RENAME TO ${table}`).execute(db);
}

async function run(db: Kysely<any>, statements: string[]): Promise<void> {
  for (const s of statements) await sql.raw(s).execute(db);
}

/** What both versions of the tables carry (indexes, append-only triggers); 0005 adds the partial unique indexes and drops usage_provider. */
const USAGE_INDEXES = [
  'CREATE INDEX usage_org ON usage_events(org_id, created_at)',
  'CREATE INDEX usage_api ON usage_events(api_id, created_at)',
];
const LEDGER_INDEXES = [
  'CREATE INDEX ledger_org ON ledger_entries(org_id, created_at)',
  ...APPEND_ONLY('ledger_entries'),
];
const EARNINGS_INDEXES = [
  'CREATE INDEX provider_earnings_org ON provider_earnings(provider_org_id, created_at)',
  ...APPEND_ONLY('provider_earnings'),
];

export async function up(db: Kysely<any>): Promise<void> {
  await rebuild(db, 'usage_events', `${USAGE} WITHOUT ROWID`);
  await run(db, USAGE_INDEXES);
  await rebuild(db, 'ledger_entries', `${LEDGER('')} WITHOUT ROWID`);
  await run(db, [
    ...LEDGER_INDEXES,
    "CREATE UNIQUE INDEX ledger_idem ON ledger_entries(idempotency_key) WHERE kind <> 'call_charge'",
  ]);
  await rebuild(db, 'provider_earnings', `${EARNINGS('')} WITHOUT ROWID`);
  await run(db, [
    ...EARNINGS_INDEXES,
    "CREATE UNIQUE INDEX provider_earnings_idem ON provider_earnings(idempotency_key) WHERE kind <> 'earning'",
  ]);
}

export async function down(db: Kysely<any>): Promise<void> {
  await rebuild(db, 'usage_events', USAGE);
  await run(db, [...USAGE_INDEXES, 'CREATE INDEX usage_provider ON usage_events(provider_org_id, created_at)']);
  await rebuild(db, 'ledger_entries', LEDGER(' UNIQUE'));
  await run(db, LEDGER_INDEXES);
  await rebuild(db, 'provider_earnings', EARNINGS(' UNIQUE'));
  await run(db, EARNINGS_INDEXES);
}
