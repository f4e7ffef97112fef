/**
 * What differs between the two stores, one place per concern: which store a kysely handle talks to, the SQL
 * fragments that are spelled differently, PostgreSQL's serializable retry, the change-feed ordering lock, and
 * single-runner jobs. Services ask here instead of branching on the store themselves (docs/scale-out.md).
 */
import { PostgresAdapter, sql, type Expression, type Kysely, type RawBuilder, type Transaction } from 'kysely';

export type StoreDialect = 'sqlite' | 'postgres';

/** The store behind a kysely handle or transaction (its adapter says which SQL it speaks). */
export function dialectOf(db: Kysely<any> | Transaction<any>): StoreDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** `YYYY-MM-DD` (UTC) of an epoch-milliseconds expression. */
export function utcDayText(db: Kysely<any>, ms: Expression<number>): RawBuilder<string> {
  return dialectOf(db) === 'postgres'
    ? sql<string>`to_char(to_timestamp(${ms} / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
    : sql<string>`strftime('%Y-%m-%d', ${ms} / 1000, 'unixepoch')`;
}

/** A float division, whatever the operands' integer types. */
export function realDiv(
  a: Expression<number> | RawBuilder<number>,
  b: Expression<number> | RawBuilder<number>,
): RawBuilder<number> {
  return sql<number>`CAST(${a} AS DOUBLE PRECISION) / ${b}`;
}

/** SQLSTATEs after which a PostgreSQL transaction is safe to run again from the start. */
const RETRYABLE = new Set(['40001', '40P01']);
export const SERIALIZABLE_MAX_ATTEMPTS = 12;

function _sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Runs `attempt` again while PostgreSQL refuses it as a serialization failure or deadlock (each run is a whole
 * transaction, so a retry starts clean), with a short random backoff; gives up after SERIALIZABLE_MAX_ATTEMPTS.
 */
export async function retrySerializable<T>(attempt: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (e) {
      if (i >= SERIALIZABLE_MAX_ATTEMPTS || !RETRYABLE.has(_sqlState(e) ?? '')) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 4 * i));
    }
  }
}

/** Advisory lock ids (one 64-bit space per database). */
export const LOCK_IDS = {
  /** Writers of `changes` take it so that `seq` order is commit order (scale-out-notes §2.4). */
  changes: 0x5356_4301,
} as const;

/** A stable 64-bit-safe advisory key for a job name (FNV-1a, 31 bits, so it fits any integer column). */
export function jobLockId(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return 0x5356_0000_0000 + (h >>> 1);
}

/**
 * Runs a scheduled job on one node at a time. On PostgreSQL: a transaction on its own connection takes
 * `pg_try_advisory_xact_lock(job)` and stays open while `run` works on other connections; another node's try fails
 * and it skips the tick (resolves false). The lock ends with the transaction, or with its connection if this node
 * dies, so a crashed runner never blocks the others. Jobs keep their steps idempotent (payouts are unique per
 * period, sweeps are conditional updates) because a runner whose lock connection broke may still finish a step.
 * SQLite is one machine, and each job runs in one process there already: `run` just runs.
 */
export async function runAsSingleRunner(db: Kysely<any>, job: string, run: () => Promise<unknown>): Promise<boolean> {
  if (dialectOf(db) !== 'postgres') {
    await run();
    return true;
  }
  return db.connection().execute(async (conn) => {
    await sql`BEGIN`.execute(conn);
    try {
      const got = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${jobLockId(job)}) AS ok`.execute(conn);
      if (!got.rows[0]?.ok) return false;
      await run();
      return true;
    } finally {
      await sql`COMMIT`.execute(conn).catch(() => {});
    }
  });
}

/**
 * A column reference the planner should not use an index for: SQLite's unary `+` (its documented way to keep an
 * index out of a plan); PostgreSQL's planner costs the choice itself, and `+` is not defined on text there.
 */
export function withoutIndex(db: Kysely<any>, column: string): RawBuilder<unknown> {
  return dialectOf(db) === 'postgres' ? sql.ref(column) : sql`+${sql.ref(column)}`;
}
