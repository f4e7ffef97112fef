/**
 * Fixtures for the gateway's PostgreSQL store tests (the cluster itself: test/helpers/postgres.ts).
 *
 */
import { afterAll, beforeAll } from 'vitest';
import { postgresAvailable, startPostgres, type PgCluster } from '../../../helpers/postgres.js';
import { Pg, sql } from '../../../../gateway/pg/connect.js';
import { openPostgres } from '../../../../core/db/database.js';
import { migrateToLatest } from '../../../../core/db/migrate.js';

/** Why the PostgreSQL tests cannot run here, or null. */
export function pgUnavailable(): string | null {
  return postgresAvailable()
    ? null
    : 'PostgreSQL 15 binaries not found (Debian postgresql-15; test/helpers/postgres.ts)';
}

/**
 * A PostgreSQL cluster of this test file's own (it may crash-restart it), one migrated database, and an admin pool;
 * stopped in afterAll. Nothing starts when PostgreSQL is unavailable (the suite skips).
 */
export function useGatewayPg(): { url(): string; admin(): Pg; cluster(): PgCluster } {
  let cluster: PgCluster | undefined;
  let url = '';
  let admin: Pg | undefined;
  beforeAll(async () => {
    if (pgUnavailable()) return;
    cluster = await startPostgres();
    url = await cluster.createDatabase();
    admin = new Pg(url, { max: 2 });
    await createGatewaySchema(url);
  }, 60_000);
  afterAll(async () => {
    await admin?.end();
    await cluster?.stop();
  });
  return { url: () => url, admin: () => admin!, cluster: () => cluster! };
}

/** The real schema: the project's migrations on PostgreSQL (pg/0001_baseline, then 0014+ including 0021). */
export async function createGatewaySchema(url: string): Promise<void> {
  const h = openPostgres(url, { max: 1 });
  try {
    await migrateToLatest(h.db);
  } finally {
    await h.close();
  }
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
    sql`INSERT INTO api_keys (id, org_id, name, key_hash, start, scopes, origin, budget_cents, daily_cap_cents, created_at, updated_at)
      VALUES (${keyId}, ${orgId}, 'k', ${keyHash}, 'svc_live_x', 'proxy:call', 'admin', ${key.budgetCents ?? null},
              ${key.dailyCapCents ?? null}, ${now}, ${now})`,
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
      COALESCE((SELECT sum(charged_cents) FROM usage_calls u WHERE u.org_num = (SELECT num FROM id_nums n WHERE n.id = b.org_id)), 0)::bigint AS usage,
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
           COALESCE((SELECT sum(charged_cents) FROM usage_calls), 0)::bigint AS usage`)) as {
    gross: number;
    usage: number;
  }[];
  if (e!.gross !== e!.usage) out.push(`earnings gross ${e!.gross} != usage ${e!.usage}`);
  return out;
}
