/**
 * Fixtures for the gateway's PostgreSQL store tests (the cluster itself: test/helpers/postgres.ts).
 *
 * Schema: the gateway's tables as the PostgreSQL store uses them (migrations 0001/0005/0021 in PostgreSQL types:
 * bigint ms and cents). Until pg-a's migrations run on PostgreSQL (test/helpers/postgres.ts on branch pg-a),
 * this DDL stands in for them; once they land, `createGatewaySchema` should run `migrateToLatest` instead.
 */
import { postgresAvailable } from '../../../helpers/postgres.js';
import { raw, sql, type Pg } from '../../../../gateway/pg/connect.js';

/** Why the PostgreSQL tests cannot run here, or null. */
export function pgUnavailable(): string | null {
  return postgresAvailable()
    ? null
    : 'PostgreSQL 15 binaries not found (Debian postgresql-15; test/helpers/postgres.ts)';
}

const DDL = [
  `CREATE TABLE orgs (id TEXT PRIMARY KEY, name TEXT NOT NULL, origin TEXT NOT NULL,
     status TEXT NOT NULL DEFAULT 'active', email_verified_at BIGINT, created_at BIGINT NOT NULL)`,
  `CREATE TABLE api_keys (id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES orgs(id), name TEXT NOT NULL,
     key_hash TEXT NOT NULL UNIQUE, scopes TEXT NOT NULL, approval_mode TEXT NOT NULL DEFAULT 'auto',
     budget_cents BIGINT CHECK (budget_cents >= 0), per_call_max_cents BIGINT, daily_cap_cents BIGINT CHECK (daily_cap_cents >= 0),
     rate_limit_per_min BIGINT, spent_cents BIGINT NOT NULL DEFAULT 0 CHECK (spent_cents >= 0),
     created_at BIGINT NOT NULL, revoked_at BIGINT, last_used_at BIGINT)`,
  `CREATE TABLE key_daily_spend (key_id TEXT NOT NULL REFERENCES api_keys(id), day BIGINT NOT NULL,
     spent_cents BIGINT NOT NULL DEFAULT 0 CHECK (spent_cents >= 0), PRIMARY KEY (key_id, day))`,
  `CREATE TABLE changes (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     entity TEXT NOT NULL CHECK (entity IN ('key','org','api','terms')), entity_id TEXT NOT NULL, created_at BIGINT NOT NULL)`,
  `CREATE TABLE ledger_entries (id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES orgs(id), key_id TEXT,
     kind TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('settled','pending')), amount_cents BIGINT NOT NULL,
     reason TEXT, ref_type TEXT, ref_id TEXT, idempotency_key TEXT NOT NULL, created_at BIGINT NOT NULL)`,
  `CREATE TABLE balances (org_id TEXT PRIMARY KEY REFERENCES orgs(id),
     credit_cents BIGINT NOT NULL DEFAULT 0 CHECK (credit_cents >= 0),
     pending_cents BIGINT NOT NULL DEFAULT 0 CHECK (pending_cents >= 0),
     reserved_cents BIGINT NOT NULL DEFAULT 0 CHECK (reserved_cents >= 0 AND reserved_cents <= credit_cents),
     updated_at BIGINT NOT NULL)`,
  `CREATE TABLE usage_events (id TEXT PRIMARY KEY, org_id TEXT NOT NULL, key_id TEXT NOT NULL, api_id TEXT NOT NULL,
     endpoint_id TEXT NOT NULL, provider_org_id TEXT NOT NULL, method TEXT NOT NULL, status INTEGER NOT NULL,
     latency_ms BIGINT NOT NULL, price_cents BIGINT NOT NULL, charged_cents BIGINT NOT NULL, error_code TEXT,
     created_at BIGINT NOT NULL)`,
  `CREATE INDEX usage_org ON usage_events(org_id, created_at)`,
  `CREATE TABLE provider_earnings (id TEXT PRIMARY KEY, provider_org_id TEXT NOT NULL, api_id TEXT, kind TEXT NOT NULL,
     gross_cents BIGINT NOT NULL, fee_cents BIGINT NOT NULL, net_cents BIGINT NOT NULL, ref_id TEXT,
     idempotency_key TEXT NOT NULL, created_at BIGINT NOT NULL)`,
  `CREATE TABLE gateway_instances (id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL DEFAULT '',
     started_at BIGINT NOT NULL, heartbeat_at BIGINT NOT NULL, stopped_at BIGINT)`,
  `CREATE TABLE balance_leases (id TEXT PRIMARY KEY, holder_id TEXT NOT NULL, org_id TEXT NOT NULL REFERENCES orgs(id),
     key_id TEXT NOT NULL REFERENCES api_keys(id), day BIGINT NOT NULL, amount_cents BIGINT NOT NULL CHECK (amount_cents > 0),
     spent_cents BIGINT NOT NULL DEFAULT 0 CHECK (spent_cents >= 0 AND spent_cents <= amount_cents),
     unfolded_cents BIGINT NOT NULL DEFAULT 0 CHECK (unfolded_cents >= 0 AND unfolded_cents <= spent_cents),
     created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, released_at BIGINT)`,
  `CREATE INDEX balance_leases_open ON balance_leases(holder_id) WHERE released_at IS NULL`,
  `CREATE INDEX balance_leases_key ON balance_leases(key_id, day) WHERE released_at IS NULL`,
  `CREATE INDEX balance_leases_org ON balance_leases(org_id) WHERE released_at IS NULL`,
  `CREATE TABLE idempotency_records (org_id TEXT NOT NULL, idem_key TEXT NOT NULL, request_hash TEXT NOT NULL,
     request_id TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('in_flight','done')), holder_id TEXT NOT NULL,
     response_status INTEGER, response_headers_json TEXT, response_body BYTEA, created_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL, PRIMARY KEY (org_id, idem_key))`,
];

export async function createGatewaySchema(db: Pg): Promise<void> {
  for (const d of DDL) await db.rows(raw(d));
}

export interface Parties {
  orgId: string;
  keyId: string;
  keyHash: string;
  providerOrgId: string;
}

let n = 0;
/** A consumer org holding `credit` cents (one settled purchase entry), its key, and a provider org. */
export async function seedParties(
  db: Pg,
  credit: number,
  key: { budgetCents?: number | null; dailyCapCents?: number | null } = {},
): Promise<Parties> {
  const i = ++n;
  const now = Date.now();
  const orgId = `org_c${i}`;
  const providerOrgId = `org_p${i}`;
  const keyId = `key_${i}`;
  const keyHash = `hash_${i}`;
  await db.pipeline([
    sql`INSERT INTO orgs (id, name, origin, created_at) VALUES (${orgId}, 'c', 'admin', ${now}), (${providerOrgId}, 'p', 'admin', ${now})`,
    sql`INSERT INTO api_keys (id, org_id, name, key_hash, scopes, budget_cents, daily_cap_cents, created_at)
      VALUES (${keyId}, ${orgId}, 'k', ${keyHash}, 'proxy:call', ${key.budgetCents ?? null}, ${key.dailyCapCents ?? null}, ${now})`,
    sql`INSERT INTO balances (org_id, credit_cents, updated_at) VALUES (${orgId}, ${credit}, ${now}), (${providerOrgId}, 0, ${now})`,
    sql`INSERT INTO ledger_entries (id, org_id, kind, status, amount_cents, idempotency_key, created_at)
      VALUES (${`txn_seed${i}`}, ${orgId}, 'purchase', 'settled', ${credit}, ${`seed:${i}`}, ${now})`,
  ]);
  return { orgId, keyId, keyHash, providerOrgId };
}

/** The money invariants of gateway/README.md in their PostgreSQL form (fold.ts); [] when all hold. */
export async function moneyProblems(db: Pg): Promise<string[]> {
  const rows = (await db.rows(sql`
    SELECT b.org_id, b.credit_cents, b.reserved_cents,
      COALESCE((SELECT sum(amount_cents) FROM ledger_entries e WHERE e.org_id = b.org_id AND e.status = 'settled'), 0)::bigint AS ledger,
      COALESCE((SELECT sum(unfolded_cents) FROM balance_leases l WHERE l.org_id = b.org_id AND l.released_at IS NULL), 0)::bigint AS unfolded,
      COALESCE((SELECT sum(amount_cents - spent_cents + unfolded_cents) FROM balance_leases l WHERE l.org_id = b.org_id AND l.released_at IS NULL), 0)::bigint AS open,
      COALESCE((SELECT sum(charged_cents) FROM usage_events u WHERE u.org_id = b.org_id), 0)::bigint AS usage,
      COALESCE((SELECT sum(amount_cents) FROM ledger_entries e WHERE e.org_id = b.org_id AND e.kind = 'call_charge'), 0)::bigint AS charges
    FROM balances b`)) as {
    org_id: string;
    credit_cents: number;
    reserved_cents: number;
    ledger: number;
    unfolded: number;
    open: number;
    usage: number;
    charges: number;
  }[];
  const out: string[] = [];
  for (const r of rows) {
    if (r.credit_cents !== r.ledger + r.unfolded)
      out.push(`${r.org_id}: credit ${r.credit_cents} != ledger ${r.ledger} + unfolded ${r.unfolded}`);
    if (r.reserved_cents !== r.open) out.push(`${r.org_id}: reserved ${r.reserved_cents} != open slices ${r.open}`);
    if (-r.charges !== r.usage) out.push(`${r.org_id}: charges ${-r.charges} != usage ${r.usage}`);
  }
  const [e] = (await db.rows(sql`
    SELECT COALESCE((SELECT sum(gross_cents) FROM provider_earnings WHERE kind = 'earning'), 0)::bigint AS gross,
           COALESCE((SELECT sum(charged_cents) FROM usage_events), 0)::bigint AS usage`)) as {
    gross: number;
    usage: number;
  }[];
  if (e!.gross !== e!.usage) out.push(`earnings gross ${e!.gross} != usage ${e!.usage}`);
  return out;
}
