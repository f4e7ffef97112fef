/**
 * The gateway's PostgreSQL connections, on the project's driver (`pg`, node-postgres, chosen in core/db by
 * pg-a) in its pipeline mode: a whole transaction (`BEGIN; …; COMMIT`) goes out in one flight, so the settle
 * batch and the lease acquisition each cost one round trip. Statements are raw SQL (the gateway bypasses kysely
 * as on SQLite), written as tagged templates (`sql\`… ${v} …\``) that become `$n` parameters; a nested `sql`
 * fragment is spliced in with its parameters renumbered. A template without nested fragments is a NAMED prepared
 * statement (its text cached per call site, its name `svc_<n>`): each connection parses and plans it once and then
 * only binds, so neither this process nor the server re-reads the statement text per batch (named statements are
 * per session and survive a rolled-back transaction; a pooler in front must support protocol-level prepared
 * statements, e.g. PgBouncer 1.21+ with `max_prepared_statements`).
 * int8 (every ms time and cent amount, and `count(*)`) parses to a JS number: exact below 2^53.
 * Session settings: `lock_timeout` keeps `SVC_GATEWAY_LOCK_WAIT_MS`' meaning (a call whose write cannot get its
 * row locks in time fails uncharged), `statement_timeout` bounds a stuck statement, and
 * `idle_in_transaction_session_timeout` lets the server drop a partitioned gateway's open transaction (and its
 * row locks) instead of holding them until TCP gives up.
 */
import pg from 'pg';

/** A statement: text with `$n` placeholders and its values; `name` when its text is fixed (a prepared statement). */
export interface Q {
  readonly text: string;
  readonly values: readonly unknown[];
  readonly name?: string;
  readonly [FRAGMENT]: true;
}

const FRAGMENT: unique symbol = Symbol('sql fragment');

function isQ(v: unknown): v is Q {
  return typeof v === 'object' && v !== null && FRAGMENT in v;
}

/** Fixed statement texts by call site (a template's strings array is one object per site), with their names. */
const SITES = new WeakMap<TemplateStringsArray, { text: string; name: string }>();
let sites = 0;

/** `sql\`SELECT … WHERE id = ${id}\``: values become parameters; a nested `sql` fragment is spliced in. */
export function sql(strings: TemplateStringsArray, ...vals: unknown[]): Q {
  if (!vals.some(isQ)) {
    let site = SITES.get(strings);
    if (!site) {
      let text = strings[0]!;
      for (let i = 1; i < strings.length; i++) text += `$${i}${strings[i]!}`;
      site = { text, name: `svc_${++sites}` };
      SITES.set(strings, site);
    }
    return { text: site.text, values: vals, name: site.name, [FRAGMENT]: true };
  }
  let text = strings[0]!;
  const values: unknown[] = [];
  vals.forEach((v, i) => {
    if (isQ(v)) {
      const offset = values.length;
      text += v.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
      values.push(...v.values);
    } else {
      values.push(v);
      text += `$${values.length}`;
    }
    text += strings[i + 1]!;
  });
  return { text, values, [FRAGMENT]: true };
}

/** A statement whose text is built here (with `$n` placeholders already in it). */
export function raw(text: string, values: readonly unknown[] = []): Q {
  return { text, values, [FRAGMENT]: true };
}

const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/**
 * A `text[]` parameter as PostgreSQL's array literal, for `${textArray(xs)}::text[]`: every element quoted, `\` and
 * `"` escaped, null as NULL. Built in one pass (the driver's generic encoder runs two regex replaces per element):
 * the settle batch's usage INSERT sends 13 arrays with one element per call.
 */
export function textArray(xs: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (i > 0) out += ',';
    if (x === null || x === undefined) out += 'NULL';
    else out += NEEDS_ESCAPE.test(x) ? `"${x.replace(ESCAPED, '\\$&')}"` : `"${x}"`;
  }
  return `${out}}`;
}

/** An integer array parameter (`int[]`, `bigint[]`) as PostgreSQL's array literal, for `${intArray(xs)}::bigint[]`. */
export function intArray(xs: readonly number[]): string {
  return `{${xs.join(',')}}`;
}

/** Runs one statement of an open transaction; its rows. */
export type Run = <R = Record<string, unknown>>(q: Q) => Promise<R[]>;

const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export interface PgOptions {
  /** Pool size (one batch in flight per holder needs 1; acquisitions and background writes another). */
  max?: number;
  /** Milliseconds a statement waits for a row lock before failing (SQLSTATE 55P03). */
  lockWaitMs?: number;
  application?: string;
}

/** The gateway's pool and its three ways to run SQL: a statement, a pipelined transaction, an interactive one. */
export class Pg {
  readonly pool: pg.Pool;

  constructor(url: string, o: PgOptions = {}) {
    const lock = o.lockWaitMs ?? 2_000;
    this.pool = new pg.Pool({
      connectionString: url,
      max: o.max ?? 3,
      types: TYPES,
      connectionTimeoutMillis: 5_000,
      // Every few seconds the kernel probes an idle socket, so a dead peer (a partition, a crashed server) is found.
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
      application_name: o.application ?? 'svc-gateway',
      options: `-c lock_timeout=${lock} -c statement_timeout=15000 -c idle_in_transaction_session_timeout=10000`,
      // pg 8.23's pipeline mode: queries of one client go out without waiting for the previous answer.
      pipeline: true,
    });
    // A pooled client whose server went away emits 'error' while idle: the pool drops it; nothing to crash over.
    this.pool.on('error', () => {});
  }

  async rows<R = Record<string, unknown>>(q: Q): Promise<R[]> {
    return (await this.pool.query(config(q))).rows as R[];
  }

  /**
   * One transaction in one flight: `BEGIN`, the statements, `COMMIT`, written together; each statement's rows.
   * A failing statement aborts the transaction (the COMMIT then answers ROLLBACK) and its error is thrown.
   */
  async pipeline(qs: readonly Q[]): Promise<unknown[][]> {
    const c = await this.#checkout();
    let lost: unknown = undefined;
    try {
      const sent = [c.query('BEGIN'), ...qs.map((q) => c.query(config(q))), c.query('COMMIT')];
      const got = await Promise.allSettled(sent);
      const failed = got.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed.length) {
        // The first real cause, not the "current transaction is aborted" (25P02) of the statements behind it.
        const cause = (failed.find((r) => (r.reason as { code?: string }).code !== '25P02') ?? failed[0]!).reason;
        if (isConnectionLoss(cause)) lost = cause;
        throw cause;
      }
      const commit = got[got.length - 1] as PromiseFulfilledResult<pg.QueryResult>;
      if (commit.value.command !== 'COMMIT') throw new Error('the transaction was rolled back');
      return got.slice(1, -1).map((r) => (r as PromiseFulfilledResult<pg.QueryResult>).value.rows);
    } finally {
      this.#checkin(c, lost instanceof Error ? lost : undefined);
    }
  }

  /** An interactive transaction (round trip per statement): for the rare paths that decide between statements. */
  async transaction<T>(fn: (run: Run) => Promise<T>): Promise<T> {
    const c = await this.#checkout();
    let broken: Error | undefined;
    try {
      await c.query('BEGIN');
      const out = await fn(async <R>(q: Q) => (await c.query(config(q))).rows as R[]);
      await c.query('COMMIT');
      return out;
    } catch (e) {
      if (isConnectionLoss(e)) broken = e as Error;
      else await c.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      this.#checkin(c, broken);
    }
  }

  /**
   * A client of our own for a transaction. Its socket dying while checked out is reported on the client (a
   * listener is required, or the process would crash); its queries fail with the error, which is all we need.
   */
  async #checkout(): Promise<pg.PoolClient> {
    const c = await this.pool.connect();
    c.on('error', ignore);
    return c;
  }

  #checkin(c: pg.PoolClient, broken: Error | undefined): void {
    c.off('error', ignore);
    c.release(broken);
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

function ignore(): void {}

/** The driver's form of a statement: named when its text is fixed (parsed once per connection). */
function config(q: Q): pg.QueryConfig {
  return { text: q.text, values: q.values as unknown[], name: q.name };
}

/** The database's clock in epoch ms: the one clock every host agrees on (heartbeats, staleness, claim expiry). */
export const DB_NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** The connection (or the server) went away: a statement in flight may or may not have committed. */
export function isConnectionLoss(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  const msg = String((e as Error | null)?.message ?? '');
  return (
    code === 'ECONNRESET' ||
    code === 'ECONNREFUSED' ||
    code === 'EPIPE' ||
    code === 'ETIMEDOUT' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH' ||
    // admin_shutdown, crash_shutdown, cannot_connect_now (the server is restarting)
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    msg.includes('Connection terminated') ||
    msg.includes('not queryable') ||
    msg.includes('timeout exceeded when trying to connect')
  );
}
