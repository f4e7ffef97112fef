/**
 * What every control-plane handler and domain service gets: config, database, clock, mailer, payments, rate
 * limiters, public URLs. `createAppContext(config)` is the one way to build it: the control process, the operator
 * CLI, the MCP process and in-process tests all call it, and `close()` releases what it opened.
 */
import type Sqlite from 'better-sqlite3';
import type { Config } from '../core/config.js';
import { openStore, type Db, type StoreHandles } from '../core/db/database.js';
import { migrateToLatest } from '../core/db/migrate.js';
import { offsetClock, type Clock } from '../core/clock.js';
import { createLogger, type Logger } from '../core/log.js';
import { loadSecretKey } from '../core/secret-key.js';
import { createMailer, type Mailer } from './email/mailer.js';
import { createPaymentsBackend, type PaymentsBackend } from './billing/payments.js';
import { createRateLimiters, type RateLimiters } from './lib/rate-limit.js';
import { attachSearchIndex } from './catalog/search-index.owner.js';

export interface AppContext {
  config: Readonly<Config>;
  db: Db;
  /** The SQLite connection under `db`; null on PostgreSQL (SVC_DATABASE_URL). */
  sqlite: Sqlite.Database | null;
  /** The open store (SQLite file or PostgreSQL pool), for the few paths that need the raw handle. */
  store: StoreHandles;
  clock: Clock;
  log: Logger;
  mailer: Mailer;
  /** 32-byte key for upstream secrets at rest (AES-256-GCM). */
  secretKey: Buffer;
  payments: PaymentsBackend;
  limiters: RateLimiters;
  /** Public origins of the control plane, gateway and MCP server (links in mail, pages and responses). */
  urls: Readonly<Config['urls']>;
  /** Closes the database; the caller stops its servers and jobs first. */
  close(): Promise<void>;
}

export interface AppContextOptions {
  /** Logger name (`control`, `admin`, `mcp`, ...). */
  process?: string;
  /** Defaults to the system clock, or SVC_CLOCK_OFFSET_FILE's offset clock in development. */
  clock?: Clock;
  log?: Logger;
  /** Replaces the mailer built from config (the operator tool, which sends no mail, control/admin/admin-context.ts). */
  mailer?: Mailer;
}

/** Opens and migrates the database named by config and builds the rest around it. */
export async function createAppContext(config: Readonly<Config>, opts: AppContextOptions = {}): Promise<AppContext> {
  const handles = openStore(config, { applicationName: opts.process ?? 'control' });
  try {
    await migrateToLatest(handles.db);
  } catch (e) {
    await handles.close();
    throw e;
  }
  const clock = opts.clock ?? offsetClock(config.env === 'development' ? config.clockOffsetFile : undefined);
  const secretKey = loadSecretKey(config);
  const log = opts.log ?? createLogger(opts.process ?? 'control', config.logLevel);
  // The in-memory index's base is read from FTS5 (SQLite only); on PostgreSQL search ranks in the database.
  const detachSearchIndex =
    config.searchIndex && handles.dialect !== 'postgres'
      ? attachSearchIndex(handles.db, handles.sqlite, log)
      : () => {};
  return {
    config,
    db: handles.db,
    sqlite: handles.dialect === 'postgres' ? null : handles.sqlite,
    store: handles,
    clock,
    log,
    mailer:
      opts.mailer ??
      createMailer({
        production: config.isProduction,
        smtpUrl: config.smtpUrl,
        from: config.mailFrom,
        db: handles.db,
        clock,
      }),
    secretKey,
    payments: createPaymentsBackend(config, secretKey),
    limiters: createRateLimiters(config),
    urls: config.urls,
    close: () => {
      detachSearchIndex();
      return handles.close();
    },
  };
}
