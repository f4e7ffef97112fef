/**
 * What every control-plane handler and domain service gets: config, database, clock, mailer, payments, rate
 * limiters, public URLs. `createAppContext(config)` is the one way to build it: the control process, the operator
 * CLI, the MCP process and in-process tests all call it, and `close()` releases what it opened.
 */
import type Sqlite from 'better-sqlite3';
import type { Config } from '../core/config.js';
import { openDatabase, type Db } from '../core/db/database.js';
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
  sqlite: Sqlite.Database;
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
}

/** Opens and migrates the database named by config and builds the rest around it. */
export async function createAppContext(config: Readonly<Config>, opts: AppContextOptions = {}): Promise<AppContext> {
  const handles = openDatabase(config.dbFile);
  try {
    await migrateToLatest(handles.db);
  } catch (e) {
    await handles.close();
    throw e;
  }
  const clock = opts.clock ?? offsetClock(config.env === 'development' ? config.clockOffsetFile : undefined);
  const secretKey = loadSecretKey(config);
  const log = opts.log ?? createLogger(opts.process ?? 'control', config.logLevel);
  const detachSearchIndex = config.searchIndex ? attachSearchIndex(handles.db, handles.sqlite, log) : () => {};
  return {
    config,
    db: handles.db,
    sqlite: handles.sqlite,
    clock,
    log,
    mailer: createMailer({
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
