/**
 * `svc-admin migrate-to-postgres <url>`: copies a SQLite data dir's database into an empty PostgreSQL database,
 * then proves the copy: the books check (`ledger check`) on both, and balances, ledger sums, usage and provider
 * earnings compared org by org, and every table's row count. The copy is one PostgreSQL transaction (a failure
 * leaves the target empty) read from one SQLite read transaction (a consistent snapshot; stop the processes first
 * so nothing is written after it). docs/scale-out.md "Moving from SQLite".
 */
import { sql } from 'kysely';
import type { Database, DbHandles, PgHandles } from '../../core/db/database.js';
import { migrateToLatest } from '../../core/db/migrate.js';
import { checkBooks, type BooksReport } from '../ledger/books.service.js';

/** Rows per multi-row INSERT (PostgreSQL allows 65,535 parameters; the widest table has ~30 columns). */
const BATCH = 1000;

/** SQLite-only tables (FTS5 and its shadow tables, kysely's own) and SQLite tables that are views on PostgreSQL. */
const SKIP = /^(sqlite_|apis_fts|kysely_)|^listing_search$/;

export interface MigrationCheck {
  ok: boolean;
  tables: { table: string; sqlite: number; postgres: number }[];
  books: { sqlite: BooksReport; postgres: BooksReport };
  /** Per-org figures that differ between the stores (empty when the copy is exact). */
  differences: { org_id: string; figure: string; sqlite: number; postgres: number }[];
  totals: Record<string, { sqlite: number; postgres: number }>;
}

export class TargetNotEmptyError extends Error {}

/** Tables in an order that satisfies their foreign keys (parents first). */
function _copyOrder(lite: DbHandles['sqlite'], tables: string[]): string[] {
  const deps = new Map<string, Set<string>>();
  for (const t of tables) {
    const fks = lite.prepare(`PRAGMA foreign_key_list(${t})`).all() as { table: string }[];
    deps.set(t, new Set(fks.map((f) => f.table).filter((p) => p !== t && tables.includes(p))));
  }
  const out: string[] = [];
  const visit = (t: string, path: Set<string>) => {
    if (out.includes(t) || path.has(t)) return;
    path.add(t);
    for (const p of deps.get(t) ?? []) visit(p, path);
    out.push(t);
  };
  for (const t of tables) visit(t, new Set());
  return out;
}

/** Copies every row of `lite` into the empty PostgreSQL database `pg` (migrated here to the same version). */
export async function copySqliteToPostgres(lite: DbHandles, pg: PgHandles): Promise<Record<string, number>> {
  const existing = await sql<{ n: number }>`SELECT count(*) AS n FROM information_schema.tables
    WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%'`.execute(pg.db);
  if ((existing.rows[0]?.n ?? 0) > 0)
    throw new TargetNotEmptyError('the PostgreSQL database is not empty: migrate-to-postgres needs an empty one');
  await migrateToLatest(lite.db);
  await migrateToLatest(pg.db);
  const pgColumns = new Map<string, Set<string>>();
  for (const r of (
    await sql<{ t: string; c: string }>`SELECT table_name AS t, column_name AS c FROM information_schema.columns
      WHERE table_schema = 'public'`.execute(pg.db)
  ).rows) {
    if (!pgColumns.has(r.t)) pgColumns.set(r.t, new Set());
    pgColumns.get(r.t)!.add(r.c);
  }
  const tables = (
    lite.sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[]
  ).filter((t) => !SKIP.test(t) && pgColumns.has(t));
  const counts: Record<string, number> = {};
  const sqlite = lite.sqlite;
  sqlite.exec('BEGIN'); // one snapshot of the source for the whole copy
  try {
    await pg.db.connection().execute(async (conn) => {
      await sql`BEGIN`.execute(conn);
      try {
        // The baseline seeds search_version's one row; the source's row replaces it.
        await sql`DELETE FROM search_version`.execute(conn);
        for (const table of _copyOrder(sqlite, tables)) {
          const cols = (sqlite.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[])
            .map((c) => c.name)
            .filter((c) => pgColumns.get(table)!.has(c));
          const select = sqlite.prepare(`SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM ${table}`);
          let batch: Record<string, unknown>[] = [];
          let n = 0;
          const flush = async () => {
            if (batch.length === 0) return;
            await conn
              .insertInto(table as keyof Database)
              .values(batch as never)
              .execute();
            n += batch.length;
            batch = [];
          };
          for (const row of select.iterate() as Iterable<Record<string, unknown>>) {
            batch.push(row);
            if (batch.length >= BATCH) await flush();
          }
          await flush();
          counts[table] = n;
        }
        // Identity columns continue after the copied values.
        for (const [t, c] of [
          ['changes', 'seq'],
          ['search_changes', 'seq'],
          ['id_nums', 'num'],
        ] as const)
          await sql`SELECT setval(pg_get_serial_sequence(${t}, ${c}),
            coalesce((SELECT max(${sql.ref(c)}) FROM ${sql.table(t)}), 0) + 1, false)`.execute(conn);
        await sql`COMMIT`.execute(conn);
      } catch (e) {
        await sql`ROLLBACK`.execute(conn).catch(() => {});
        throw e;
      }
    });
  } finally {
    sqlite.exec('COMMIT');
  }
  return counts;
}

/** Per-org money figures, each a `SELECT org_id, value` over either store. */
const FIGURES: Record<string, string> = {
  credit_cents: 'SELECT org_id, credit_cents AS v FROM balances',
  pending_cents: 'SELECT org_id, pending_cents AS v FROM balances',
  reserved_cents: 'SELECT org_id, reserved_cents AS v FROM balances',
  ledger_sum: 'SELECT org_id, sum(amount_cents) AS v FROM ledger_entries GROUP BY org_id',
  ledger_entries: 'SELECT org_id, count(*) AS v FROM ledger_entries GROUP BY org_id',
  usage_calls:
    'SELECT n.id AS org_id, count(*) AS v FROM usage_calls u JOIN id_nums n ON n.num = u.org_num GROUP BY n.id',
  usage_charged:
    'SELECT n.id AS org_id, sum(u.charged_cents) AS v FROM usage_calls u JOIN id_nums n ON n.num = u.org_num GROUP BY n.id',
  earnings_net: 'SELECT provider_org_id AS org_id, sum(net_cents) AS v FROM provider_earnings GROUP BY provider_org_id',
};

/** The ledger check on both stores and the per-org comparison (see the file comment). */
export async function compareStores(lite: DbHandles, pg: PgHandles): Promise<MigrationCheck> {
  const books = { sqlite: await checkBooks(lite.db), postgres: await checkBooks(pg.db) };
  const differences: MigrationCheck['differences'] = [];
  const totals: MigrationCheck['totals'] = {};
  for (const [figure, q] of Object.entries(FIGURES)) {
    const a = new Map(
      (lite.sqlite.prepare(q).all() as { org_id: string; v: number }[]).map((r) => [r.org_id, Number(r.v)]),
    );
    const b = new Map(
      (await sql<{ org_id: string; v: number }>`${sql.raw(q)}`.execute(pg.db)).rows.map((r) => [r.org_id, Number(r.v)]),
    );
    let ta = 0;
    let tb = 0;
    for (const org of new Set([...a.keys(), ...b.keys()])) {
      const va = a.get(org) ?? 0;
      const vb = b.get(org) ?? 0;
      ta += va;
      tb += vb;
      if (va !== vb) differences.push({ org_id: org, figure, sqlite: va, postgres: vb });
    }
    totals[figure] = { sqlite: ta, postgres: tb };
  }
  const tables: MigrationCheck['tables'] = [];
  const pgTables = new Set(
    (
      await sql<{ t: string }>`SELECT table_name AS t FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`.execute(pg.db)
    ).rows.map((r) => r.t),
  );
  for (const t of lite.sqlite
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`)
    .pluck()
    .all() as string[]) {
    if (SKIP.test(t) || !pgTables.has(t)) continue;
    const nl = Number(lite.sqlite.prepare(`SELECT count(*) FROM ${t}`).pluck().get());
    const np = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(t)}`.execute(pg.db)).rows[0]?.n);
    tables.push({ table: t, sqlite: nl, postgres: np });
  }
  const ok =
    books.sqlite.ok && books.postgres.ok && differences.length === 0 && tables.every((t) => t.sqlite === t.postgres);
  return { ok, tables, books, differences, totals };
}
