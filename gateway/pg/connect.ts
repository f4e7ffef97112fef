/**
 * The gateway's PostgreSQL connections (driver: `postgres`, porsager, because `sql.begin(sql => [q1, q2, …])`
 * sends a whole transaction in one flight: the settle batch and the lease acquisition each cost one round trip).
 * int8 (every ms time and cent amount, and `count(*)`) parses to a JS number: exact below 2^53.
 * Session settings: `lock_timeout` keeps `SVC_GATEWAY_LOCK_WAIT_MS`' meaning (a call whose write cannot get its
 * row locks in time fails uncharged), `statement_timeout` bounds a stuck statement, and
 * `idle_in_transaction_session_timeout` lets the server drop a partitioned gateway's open transaction (and its
 * row locks) instead of holding them until TCP gives up.
 */
import postgres from 'postgres';

const INT8 = {
  to: 20,
  from: [20],
  serialize: (x: number) => String(x),
  parse: (x: string) => Number(x),
};

export type Pg = postgres.Sql<{ int8: number }>;

export interface PgOptions {
  /** Pool size (one batch in flight per holder needs 1; acquisitions and background writes another). */
  max?: number;
  /** Milliseconds a statement waits for a row lock before failing (SQLSTATE 55P03). */
  lockWaitMs?: number;
  application?: string;
}

export function connectPg(url: string, o: PgOptions = {}): Pg {
  return postgres(url, {
    max: o.max ?? 3,
    types: { int8: INT8 },
    onnotice: () => {},
    connect_timeout: 5,
    // Every few seconds the kernel probes an idle socket, so a dead peer (a partition, a crashed server) is found.
    keep_alive: 5,
    connection: {
      application_name: o.application ?? 'svc-gateway',
      lock_timeout: o.lockWaitMs ?? 2_000,
      statement_timeout: 15_000,
      idle_in_transaction_session_timeout: 10_000,
    },
  });
}

/** The database's clock in epoch ms: the one clock every host agrees on (heartbeats, staleness, claim expiry). */
export const DB_NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** The connection (or the server) went away: a statement in flight may or may not have committed. */
export function isConnectionLoss(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return (
    code === 'CONNECTION_CLOSED' ||
    code === 'CONNECTION_ENDED' ||
    code === 'CONNECTION_DESTROYED' ||
    code === 'CONNECT_TIMEOUT' ||
    code === 'ECONNRESET' ||
    code === 'ECONNREFUSED' ||
    code === 'EPIPE' ||
    code === 'ETIMEDOUT' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH' ||
    // admin_shutdown, crash_shutdown, cannot_connect_now (the server is restarting)
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03'
  );
}
