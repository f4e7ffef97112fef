/**
 * svc's store on a real PostgreSQL 15: the migrations give the same tables and columns as SQLite's, money columns
 * come back as numbers, the ledger posts and checks exactly, read-then-write transactions never lose an update
 * (SERIALIZABLE with retry), the ledger is append-only, change-feed rows become visible in seq order with a
 * NOTIFY each, and a scheduled job runs on one node at a time.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, openPostgres, type PgHandles } from '../../../core/db/database.js';
import { migrateToLatest } from '../../../core/db/migrate.js';
import { recordChange, CHANGES_CHANNEL } from '../../../core/db/changes.js';
import { dialectOf, runAsSingleRunner } from '../../../core/db/dialect.js';
import { checkBooks } from '../../../control/ledger/books.service.js';
import { expectLedgerConsistent, grantCredits, seedOrg } from '../../helpers/db.js';
import { tempDataDir } from '../../helpers/processes.js';
import { postgresAvailable, usePostgresDatabase } from '../../helpers/postgres.js';

describe.skipIf(!postgresAvailable())('the store on PostgreSQL', () => {
  const pgdb = usePostgresDatabase();
  let h: PgHandles;
  beforeAll(async () => {
    h = openPostgres(pgdb.get());
    await migrateToLatest(h.db);
  }, 120_000);
  afterAll(() => h?.close());

  it('has exactly the tables and columns SQLite has after the same migrations', async () => {
    const data = tempDataDir();
    const lite = openDatabase(`${data.dir}/svc.db`);
    try {
      await migrateToLatest(lite.db);
      const liteCols = new Set<string>();
      const tables = lite.sqlite
        .prepare(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'apis_fts%'`,
        )
        .pluck()
        .all() as string[];
      for (const t of tables)
        for (const c of lite.sqlite.prepare(`PRAGMA table_info(${t})`).all() as { name: string }[])
          liteCols.add(`${t}.${c.name}`);
      const pgCols = await sql<{ c: string }>`SELECT table_name || '.' || column_name AS c
        FROM information_schema.columns WHERE table_schema = 'public'`.execute(h.db);
      const pgSet = new Set(pgCols.rows.map((r) => r.c));
      expect({
        // listing_search.rowid is SQLite's join key to apis_fts (not in the kysely types); PostgreSQL has no FTS5.
        onlySqlite: [...liteCols].filter((c) => !pgSet.has(c) && c !== 'listing_search.rowid'),
        onlyPg: [...pgSet].filter((c) => !liteCols.has(c)),
      }).toEqual({ onlySqlite: [], onlyPg: [] });
      expect(dialectOf(h.db)).toBe('postgres');
      expect(dialectOf(lite.db)).toBe('sqlite');
    } finally {
      await lite.close();
      data.cleanup();
    }
  });

  it('posts credits, returns cents as numbers and keeps the books exact', async () => {
    const org = await seedOrg(h);
    await grantCredits(h, org.orgId, 250);
    await grantCredits(h, org.orgId, 150);
    const bal = await h.db.selectFrom('balances').selectAll().where('org_id', '=', org.orgId).executeTakeFirstOrThrow();
    expect(bal.credit_cents).toBe(400);
    expect(typeof bal.updated_at).toBe('number');
    const sum = await sql<{ s: number; n: number }>`SELECT sum(amount_cents) AS s, count(*) AS n
      FROM ledger_entries WHERE org_id = ${org.orgId}`.execute(h.db);
    expect(sum.rows[0]).toEqual({ s: 400, n: 2 });
    await expectLedgerConsistent(h);
    expect((await checkBooks(h.db)).ok).toBe(true);
  });

  it('never loses an update when transactions read then write the same row at once', async () => {
    const org = await seedOrg(h);
    const n = 16;
    await Promise.all(
      Array.from({ length: n }, () =>
        h.db.transaction().execute(async (trx) => {
          const row = await trx
            .selectFrom('billing_accounts')
            .select('auto_reload_failures')
            .where('org_id', '=', org.orgId)
            .executeTakeFirst();
          if (!row)
            await trx
              .insertInto('billing_accounts')
              .values({ org_id: org.orgId, processor: 'test', auto_reload_failures: 1, updated_at: Date.now() })
              .execute();
          else
            await trx
              .updateTable('billing_accounts')
              .set({ auto_reload_failures: row.auto_reload_failures + 1 })
              .where('org_id', '=', org.orgId)
              .execute();
        }),
      ),
    );
    const row = await h.db
      .selectFrom('billing_accounts')
      .select('auto_reload_failures')
      .where('org_id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    expect(row.auto_reload_failures).toBe(n);
  });

  it('refuses to update or delete ledger entries', async () => {
    const org = await seedOrg(h);
    await grantCredits(h, org.orgId, 10);
    await expect(
      h.db.updateTable('ledger_entries').set({ amount_cents: 1_000_000 }).where('org_id', '=', org.orgId).execute(),
    ).rejects.toThrow(/append-only/);
    await expect(h.db.deleteFrom('ledger_entries').where('org_id', '=', org.orgId).execute()).rejects.toThrow(
      /append-only/,
    );
    await expectLedgerConsistent(h);
  });

  it('makes change-feed rows visible in seq order and notifies each commit', async () => {
    const listener = new pg.Client({ connectionString: pgdb.get() });
    await listener.connect();
    const seen: number[] = [];
    listener.on('notification', (m) => {
      if (m.channel === CHANGES_CHANNEL) seen.push(Number(m.payload));
    });
    await listener.query(`LISTEN ${CHANGES_CHANNEL}`);
    try {
      const before = Number(
        (await sql<{ m: number | null }>`SELECT max(seq) AS m FROM changes`.execute(h.db)).rows[0]?.m ?? 0,
      );
      // A slow writer takes the lock first: the fast ones queue behind it instead of committing lower... higher seqs first.
      const slow = h.db.transaction().execute(async (trx) => {
        await recordChange(trx, 'key', 'key_slow', Date.now());
        await sql`SELECT pg_sleep(0.3)`.execute(trx);
      });
      await new Promise((r) => setTimeout(r, 50));
      const fast = Array.from({ length: 5 }, (_, i) => recordChange(h.db, 'org', `org_${i}`, Date.now()));
      // While the slow transaction is open nothing past `before` is visible: no reader can skip its seq.
      const mid = await sql<{ n: number }>`SELECT count(*) AS n FROM changes WHERE seq > ${before}`.execute(h.db);
      expect(mid.rows[0]?.n).toBe(0);
      await Promise.all([slow, ...fast]);
      const rows = await sql<{ seq: number; entity_id: string }>`SELECT seq, entity_id FROM changes
        WHERE seq > ${before} ORDER BY seq`.execute(h.db);
      expect(rows.rows).toHaveLength(6);
      expect(rows.rows[0]?.entity_id).toBe('key_slow');
      const deadline = Date.now() + 5_000;
      while (seen.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect([...seen].sort((a, b) => a - b)).toEqual(rows.rows.map((r) => r.seq));
    } finally {
      await listener.end();
    }
  });

  it('runs a scheduled job on one node at a time', async () => {
    const other = openPostgres(pgdb.get());
    try {
      let runs = 0;
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const first = runAsSingleRunner(h.db, 'payouts', async () => {
        runs++;
        await gate;
      });
      await new Promise((r) => setTimeout(r, 100));
      // Another node (its own pool) ticks while the first still runs: it skips.
      expect(await runAsSingleRunner(other.db, 'payouts', async () => runs++)).toBe(false);
      // A different job is not blocked.
      expect(await runAsSingleRunner(other.db, 'sweeps', async () => {})).toBe(true);
      release();
      expect(await first).toBe(true);
      expect(await runAsSingleRunner(other.db, 'payouts', async () => runs++)).toBe(true);
      expect(runs).toBe(2);
    } finally {
      await other.close();
    }
  });
});
