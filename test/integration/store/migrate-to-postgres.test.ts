/**
 * `npm run admin -- migrate-to-postgres <url>` (the compiled operator CLI): a SQLite data dir with credits, paid
 * calls, provider earnings, a listing and change-feed rows lands in an empty PostgreSQL database with every row,
 * the books check passes on both stores and balances, ledger sums, usage and earnings compare equal; a non-empty
 * target is refused; and the comparison is not vacuous: a tampered copy is reported.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openDatabase, openPostgres, type DbHandles } from '../../../core/db/database.js';
import { migrateToLatest } from '../../../core/db/migrate.js';
import { recordChange } from '../../../core/db/changes.js';
import { compareStores } from '../../../control/admin/migrate-to-postgres.js';
import { chargeLikeGateway, grantCredits, seedListing, seedOrg } from '../../helpers/db.js';
import { baseEnv, tempDataDir } from '../../helpers/processes.js';
import { databaseName, postgresAvailable, usePostgresDatabase } from '../../helpers/postgres.js';
import { runAdmin } from '../billing/admin-cli.js';

describe.skipIf(!postgresAvailable())('migrate-to-postgres', () => {
  const pgdb = usePostgresDatabase();
  const data = tempDataDir();
  let lite: DbHandles;
  let payer: Awaited<ReturnType<typeof seedOrg>>;
  let provider: Awaited<ReturnType<typeof seedOrg>>;

  beforeAll(async () => {
    lite = openDatabase(join(data.dir, 'svc.db')); // the source is SQLite in either pass
    await migrateToLatest(lite.db);
    payer = await seedOrg(lite);
    provider = await seedOrg(lite);
    await grantCredits(lite, payer.orgId, 1_000);
    const { apiId } = await seedListing(lite, {
      orgId: provider.orgId,
      slug: 'weather-copy',
      baseUrl: 'http://127.0.0.1:9',
      endpoints: [{ method: 'GET', path: '/now', priceCents: 7 }],
    });
    for (let i = 0; i < 25; i++)
      await chargeLikeGateway(lite, payer, 7, { providerOrgId: provider.orgId, apiId, platformFeeBps: 2000 });
    await lite.db.transaction().execute((trx) => recordChange(trx, 'key', payer.keyId, Date.now()));
    await lite.db.transaction().execute((trx) => recordChange(trx, 'org', payer.orgId, Date.now()));
  }, 120_000);
  afterAll(async () => {
    await lite?.close();
    data.cleanup();
  });

  it('copies every row, and the books and per-org figures agree on both stores', { timeout: 120_000 }, async () => {
    const run = await runAdmin(baseEnv(data.dir), ['migrate-to-postgres', pgdb.get(), '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const { copied, check } = run.json.data;
    expect(check.ok).toBe(true);
    expect(copied.usage_calls).toBe(25);
    expect(copied.ledger_entries).toBe(26); // the grant + 25 call charges
    const liteChanges = Number(lite.sqlite.prepare('SELECT count(*) FROM changes').pluck().get());
    expect(liteChanges).toBeGreaterThanOrEqual(2);
    expect(copied.changes).toBe(liteChanges);
    expect(check.totals.credit_cents).toEqual({ sqlite: 1_000 - 25 * 7, postgres: 1_000 - 25 * 7 });
    expect(check.totals.usage_charged).toEqual({ sqlite: 175, postgres: 175 });
    expect(check.books.postgres.ok).toBe(true);
    expect(check.tables.every((t: { sqlite: number; postgres: number }) => t.sqlite === t.postgres)).toBe(true);

    // The copy is a working store: change-feed seqs continue after the copied ones.
    const pg = openPostgres(pgdb.get());
    try {
      await recordChange(pg.db, 'key', payer.keyId, Date.now());
      const seqs = await sql<{ seq: number }>`SELECT seq FROM changes ORDER BY seq`.execute(pg.db);
      expect(seqs.rows.map((r) => r.seq)).toEqual(Array.from({ length: liteChanges + 1 }, (_, i) => i + 1));
    } finally {
      await pg.close();
    }
  });

  it('refuses a target database that is not empty', { timeout: 60_000 }, async () => {
    const run = await runAdmin(baseEnv(data.dir), ['migrate-to-postgres', pgdb.get(), '--json']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/not empty/);
  });

  it('reports a copy whose money differs', async () => {
    const pg = openPostgres(pgdb.get());
    try {
      await pg.db.updateTable('balances').set({ credit_cents: 1 }).where('org_id', '=', payer.orgId).execute();
      const check = await compareStores(lite, pg);
      expect(check.ok).toBe(false);
      expect(check.books.postgres.ok).toBe(false);
      expect(check.differences).toContainEqual({
        org_id: payer.orgId,
        figure: 'credit_cents',
        sqlite: 825,
        postgres: 1,
      });
    } finally {
      await pg.close();
    }
    expect(databaseName(pgdb.get())).toMatch(/^svc_/);
  });
});
