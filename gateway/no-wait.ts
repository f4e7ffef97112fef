/**
 * Taking the SQLite write lock without ever sleeping on the event loop. SQLite's busy handler sleeps 1, 2, 5,
 * 10, 15 ms... while another connection (our checkpoint thread, another gateway process, the control plane)
 * holds the lock: on the gateway's thread that stalled every connection for 30+ ms at a time. Hot-path
 * transactions go through `noWait(...).run` instead and, when the lock is taken, retry on a timer (the settle
 * writer keeps its batch queued; the pipeline's steps use `retryWhileBusy`); background
 * writes (lease shrinks on a change, pressure signals, housekeeping) go through `whenUnlocked`. The gateway's
 * worker makes its connection `neverWait` once started, so none of this toggles anything on the hot path.
 */
import Sqlite from '../core/db/sqlite-driver.js';

/** The lock is held by another connection right now. */
export function isBusy(e: unknown): boolean {
  return e instanceof Sqlite.SqliteError && (e.code === 'SQLITE_BUSY' || e.code.startsWith('SQLITE_BUSY_'));
}

export interface NoWait {
  /** Runs `fn` with busy_timeout 0: its BEGIN IMMEDIATE throws SQLITE_BUSY (see isBusy) rather than sleeping. */
  run<T>(fn: () => T): T;
}

/** Connections whose busy_timeout is 0 for good (neverWait): noWait needs no toggling on them. */
const neverWaiting = new WeakSet<Sqlite.Database>();

/**
 * Makes a connection never sleep on the lock, for good: the gateway worker's own connection, once startup is done.
 * Toggling busy_timeout around every hot-path transaction cost two PRAGMA compilations per commit (about 4 % of a
 * paid call's CPU, profiled). Reads do not wait for writers in WAL mode; the one case left is a connection that
 * is rebuilding the wal-index after a crash (SQLITE_BUSY_RECOVERY), where a read now fails at once instead of
 * waiting (a cache miss then answers 500 `internal`, uncharged). Blocking work on such a connection (the
 * shutdown flush) goes through `waitingForLock`.
 */
export function neverWait(sqlite: Sqlite.Database): void {
  sqlite.pragma('busy_timeout = 0');
  neverWaiting.add(sqlite);
}

/**
 * Runs `fn` on a neverWait connection with a busy timeout of `ms`: only where waiting is right (shutdown). On any
 * other connection `fn` simply runs under the connection's own timeout.
 */
export function waitingForLock<T>(sqlite: Sqlite.Database, ms: number, fn: () => T): T {
  if (!neverWaiting.has(sqlite)) return fn();
  sqlite.pragma(`busy_timeout = ${ms}`);
  try {
    return fn();
  } finally {
    sqlite.pragma('busy_timeout = 0');
  }
}

export function noWait(sqlite: Sqlite.Database): NoWait {
  const restore = sqlite.pragma('busy_timeout', { simple: true }) as number;
  return {
    run<T>(fn: () => T): T {
      if (neverWaiting.has(sqlite)) return fn();
      // Not a prepared statement: SQLite applies PRAGMA busy_timeout when the statement is compiled.
      sqlite.pragma('busy_timeout = 0');
      try {
        return fn();
      } finally {
        sqlite.pragma(`busy_timeout = ${restore}`);
      }
    },
  };
}

/** How long hot-path work retries a held lock before giving up: the blocking setting it replaces (5 s). */
export const LOCK_RETRY_LIMIT_MS = 5_000;

/** The retry interval: a timer, not setImmediate, so a long-held lock costs no CPU. */
export const LOCK_RETRY_MS = 1;

/**
 * A hot-path step whose transaction may find the lock held: tried again on a `LOCK_RETRY_MS` timer while it
 * throws SQLITE_BUSY, until `deadline` (epoch ms) passes or `gone()` says the caller left; then the error is
 * rethrown. Any other error is rethrown at once.
 */
export async function retryWhileBusy<T>(attempt: () => T, deadline: number, gone: () => boolean): Promise<T> {
  for (;;) {
    try {
      return attempt();
    } catch (e) {
      if (!isBusy(e) || Date.now() > deadline || gone()) throw e;
      await new Promise((r) => setTimeout(r, LOCK_RETRY_MS));
    }
  }
}

/**
 * A background write that must happen but need not happen now: run it without waiting for the lock and, while
 * the lock is held elsewhere, again every `retryMs` until it goes through. Any other failure goes to `onError`
 * (never thrown into a timer, where it would end the process).
 */
export function whenUnlocked(nw: NoWait, write: () => void, onError: (e: unknown) => void, retryMs = 5): void {
  try {
    nw.run(write);
  } catch (e) {
    if (isBusy(e)) setTimeout(() => whenUnlocked(nw, write, onError, retryMs), retryMs);
    else onError(e);
  }
}
