/**
 * One gateway worker process: opens the DB, wires caches, leases, writer, change feed and timers around the
 * pipeline, listens, and on SIGTERM/SIGINT drains, flushes settles, returns its leases and exits 0.
 */
import { openDatabase } from '../core/db/database.js';
import { migrateToLatest } from '../core/db/migrate.js';
import { loadSecretKey } from '../core/secret-key.js';
import { offsetClock, utcDay } from '../core/clock.js';
import { createLogger, type Logger } from '../core/log.js';
import type { GatewayConfig } from './config.js';
import { KeyCache } from './cache/key-cache.js';
import { ListingCache } from './cache/listing-cache.js';
import { ChangeFeed } from '../core/db/change-feed.js';
import { LeaseManager } from './leases.js';
import { SettleWriter, HolderReapedError } from './settle-writer.js';
import { TermsRefusals } from './terms-refusals.js';
import { IdempotencyStore } from './idempotency.js';
import { Instances } from './instances.js';
import { KeyRateLimiter } from './rate-limiter.js';
import type { Pipeline } from './pipeline.js';
import { buildPipeline } from './wire.js';
import { createServer, type ServerState } from './server.js';
import { serverFor, type ServerChoice } from './server-choice.js';
import { GatewayMetrics, ReadCounter, ReadGauge, answerMetricsRequests, walBytes } from './metrics.js';
import { registryRenderer, serveMetrics } from '../core/metrics.js';
import type { KeyCache as KeyCacheT } from './cache/key-cache.js';
import type { ListingCache as ListingCacheT } from './cache/listing-cache.js';
import type { ListenSocket } from './http-api.js';
import { startBackground, configureWriterConnection } from './checkpointer.js';
import { neverWait, noWait, waitingForLock, whenUnlocked } from './no-wait.js';
import { sqliteDriver } from '../core/db/sqlite-driver.js';
import type { ChangeSource, LeaseStore, SettleStore } from './store.js';

/** Exit code of a worker whose supervisor-picked port was taken before it could listen (main.ts picks again). */
export const PICKED_PORT_TAKEN_EXIT = 75;

// Long: wiring of one worker: stores (SQLite or PostgreSQL), caches, change feed, pipeline, metrics and housekeeping
// timers, in dependency order.
export async function runWorker(cfg: Readonly<GatewayConfig>, workerIndex: number, port: number): Promise<void> {
  const base = cfg.base;
  const log = createLogger(`gateway${workerIndex ? `-${workerIndex}` : ''}`, base.logLevel);
  const metrics = new GatewayMetrics();
  let lastCheckpointAt = 0;
  const choice = serverFor(cfg.server, cfg.maxHeaderBytes, base.gatewayWorkers);
  if (choice instanceof Error) {
    log.error(`refusing to start: ${choice.message}`);
    process.exit(1);
  }
  // The one line that says which HTTP server runs, why, and what it costs (docs/operations.md "Node versions").
  if (workerIndex === 0)
    (choice.kind === 'native' ? log.info : log.warn)(`http server: ${choice.kind}`, {
      server: choice.kind,
      build: choice.build,
      why: choice.why,
      cost: choice.cost,
      node: process.versions.node,
      // Which better-sqlite3 build this Node runs (core/db/sqlite-driver.ts); none on PostgreSQL.
      sqlite: base.databaseUrl ? undefined : `${sqliteDriver.pkg}@${sqliteDriver.version}`,
    });
  // PostgreSQL (SVC_DATABASE_URL): the same pipeline over the gateway/pg stores (gateway/pg/worker-stores.ts).
  if (base.databaseUrl) {
    const { openPgStores } = await import('./pg/worker-stores.js');
    const stores = await openPgStores(cfg, base.databaseUrl, workerIndex, log);
    return serve(cfg, workerIndex, port, log, choice, stores);
  }
  const handles = openDatabase(base.dbFile);
  await migrateToLatest(handles.db);
  const sqlite = handles.sqlite;
  configureWriterConnection(sqlite, cfg);
  // Writes made from timers and change handlers never sleep on the SQLite lock on this thread (no-wait.ts).
  const backgroundWrites = noWait(sqlite);
  const inBackground = (write: () => void, what: string) =>
    whenUnlocked(backgroundWrites, write, (e) => log.error(`${what} failed`, { err: e as Error }));
  const clock = offsetClock(base.env === 'development' ? base.clockOffsetFile : undefined);
  const secretKey = loadSecretKey(base);

  // Liveness (heartbeats, staleness) runs on real time, never on the test-movable clock: a clock jump in one
  // process must not make a live sibling look dead.
  const instances = new Instances(sqlite, Date.now());
  const reaped = instances.reapDead(Date.now(), cfg.staleMs);
  if (reaped > 0) log.info("released dead holders' leases", { cents: reaped });
  const keys = new KeyCache(sqlite);
  const listings = new ListingCache(sqlite, secretKey);
  const leases = new LeaseManager(sqlite, instances.id, {
    workers: base.gatewayWorkers,
    maxChunkCents: cfg.leaseMaxCents,
    idleMs: cfg.leaseIdleMs,
  });
  const writer = new SettleWriter(sqlite, {
    holderId: instances.id,
    platformFeeBps: base.platformFeeBps,
    lockWaitLimitMs: cfg.lockWaitMs,
    onCommitted: (records) => {
      for (const r of records) {
        if (r.leaseId !== null && r.chargedCents > 0) leases.committed(r.leaseId, r.chargedCents);
        metrics.settled(r);
      }
    },
    onCommitTime: (ms) => metrics.settleCommit.observe(ms / 1000),
  });
  const fatal = (why: string) => {
    log.error('stopping: this holder was reaped by another process', { why });
    process.exit(1);
  };
  // Checkpoints (worker 0 only) and this holder's heartbeat run in a thread: no SQLite write on a timer here.
  const stopBackground = startBackground({
    file: base.dbFile,
    checkpointMs: workerIndex === 0 ? cfg.checkpointMs : 0,
    checkpointFrames: cfg.checkpointFrames,
    walLimitBytes: cfg.walLimitBytes,
    holderId: instances.id,
    heartbeatMs: cfg.heartbeatMs,
    onReaped: () => fatal('heartbeat refused'),
    onCheckpoint: (c) => {
      metrics.checkpoint.observe(c.ms / 1000);
      lastCheckpointAt = Date.now();
    },
  });
  const feed = new ChangeFeed(
    sqlite,
    (rows) => {
      for (const r of rows) {
        if (r.entity === 'key') {
          keys.dropKey(r.entity_id);
          inBackground(() => leases.shrinkWhere((l) => l.keyId === r.entity_id, clock.now()), 'lease shrink');
        } else if (r.entity === 'org') {
          keys.dropOrg(r.entity_id);
          inBackground(() => leases.shrinkWhere((l) => l.orgId === r.entity_id, clock.now()), 'lease shrink');
        } else if (r.entity === 'api') listings.dropApi(r.entity_id);
        else listings.dropTerms(r.entity_id);
      }
    },
    () => keys.clearUnknown(),
    (e) => log.warn('change feed poll failed; retrying next tick', { err: e as Error }),
  );
  const pressureAt = new Map<string, number>();
  const pressureStmt = sqlite.prepare("INSERT INTO changes (entity, entity_id, created_at) VALUES ('org', ?, ?)");
  const pipeline = buildPipeline(cfg, log, clock, metrics, {
    keys,
    listings,
    leases,
    writer,
    idem: new IdempotencyStore(sqlite, writer, instances.id, cfg.idempotencyTtlMs, (e) =>
      log.error('idempotency release failed', { err: e as Error }),
    ),
    limiter: new KeyRateLimiter(base.gatewayWorkers),
    termsRefusals: new TermsRefusals(sqlite, writer, (e) =>
      log.warn('recording a terms refusal failed', { err: e as Error }),
    ),
    signalPressure(orgId) {
      const now = clock.now();
      if ((pressureAt.get(orgId) ?? 0) > now - cfg.pollMs) return;
      pressureAt.set(orgId, now);
      inBackground(() => pressureStmt.run(orgId, now), 'pressure signal');
    },
  });

  if (cfg.metering) feed.start(cfg.pollMs);
  else feed.start(Math.max(cfg.pollMs, 250));
  // Reaping dead holders and returning idle slices, never waiting for the lock on this thread: while another
  // connection holds it (busy siblings commit all the time), the round is retried every few ms until it runs.
  let housekeepingPending = false;
  const housekeeping = setInterval(() => {
    if (housekeepingPending) return; // the last round is still waiting for the lock
    housekeepingPending = true;
    whenUnlocked(
      backgroundWrites,
      () => {
        const now = clock.now();
        instances.reapDead(Date.now(), cfg.staleMs);
        leases.releaseIdle(now, utcDay(now));
        housekeepingPending = false;
      },
      (e) => {
        housekeepingPending = false;
        log.warn('housekeeping failed', { err: e as Error });
      },
    );
  }, cfg.heartbeatMs);
  housekeeping.unref();

  // From here on this thread's connection never sleeps on the lock (no-wait.ts); only shutdown waits for it.
  neverWait(sqlite);
  return serve(cfg, workerIndex, port, log, choice, {
    holderId: instances.id,
    metrics,
    keys,
    listings,
    gauges: [
      new ReadGauge(
        'svc_gateway_reserved_cents',
        'Cents reserved in leases and not spent yet',
        () => leases.reservedCents,
      ),
      new ReadGauge('svc_gateway_wal_bytes', 'Size of the SQLite WAL file', () => walBytes(base.dbFile), 'max'),
      new ReadGauge(
        'svc_gateway_checkpoint_last_timestamp_seconds',
        'When the last WAL checkpoint finished (0: none yet)',
        () => lastCheckpointAt / 1000,
        'max',
      ),
    ],
    pipeline,
    feed,
    writer,
    leases,
    async stop() {
      writer.flush(true);
      feed.stop();
      clearInterval(housekeeping);
      try {
        waitingForLock(sqlite, cfg.lockWaitMs, () => {
          leases.releaseAll(clock.now());
          instances.markStopped(clock.now());
        });
      } catch (e) {
        log.error('releasing leases failed', { err: e as Error });
      }
      await stopBackground();
      sqlite.close();
    },
    fatal,
  });
}

/** What `serve` needs from a store: the pipeline over it, and how to stop (after the calls in flight drained). */
export interface WorkerStores {
  holderId: string;
  metrics: GatewayMetrics;
  keys: KeyCacheT;
  listings: ListingCacheT;
  /** The store's own gauges (SQLite: WAL size, last checkpoint, reserved cents). */
  gauges: Parameters<GatewayMetrics['registry']>[0];
  pipeline: Pipeline;
  feed: ChangeSource;
  writer: SettleStore;
  leases: LeaseStore;
  /** Writes what is queued, returns this holder's leases, marks it stopped, closes the database. */
  stop(): Promise<void>;
  /** This holder was reaped by another process: stop serving at once (exit 1; the supervisor restarts it). */
  fatal(why: string): void;
}

/**
 * Listens, prints the ready line, and on SIGTERM/SIGINT/supervisor loss drains and stops the stores.
 * Long: listen, ready line, then the drain and stop sequence on each way a worker ends; the steps share its timers and
 * state.
 */
async function serve(
  cfg: Readonly<GatewayConfig>,
  workerIndex: number,
  port: number,
  log: Logger,
  choice: ServerChoice,
  stores: WorkerStores,
): Promise<void> {
  const base = cfg.base;
  const uws = choice.server;
  const { pipeline, feed, writer, leases, metrics, keys, listings } = stores;
  const state: ServerState = {
    closing: false,
    active: 0,
    server: choice.kind,
    workerIndex,
    feedSeq: () => feed.seq,
    metrics,
    accessLog: { sample: cfg.accessLogSample, write: (fields) => log.info('call', fields) },
  };
  writer.countInFlight?.(() => state.active);
  const registry = metrics.registry([
    new ReadGauge('svc_gateway_leases_open', 'Credit leases this gateway holds', () => leases.size),
    new ReadGauge(
      'svc_gateway_settle_queue_depth',
      'Settles waiting for their group commit',
      () => writer.pending,
      'max',
    ),
    new ReadGauge(
      'svc_gateway_change_feed_lag_seconds',
      'Seconds since the change feed last read the database successfully',
      () => (performance.now() - feed.polledAt) / 1000,
      'max',
    ),
    new ReadCounter('svc_gateway_cache_requests_total', 'Key and listing cache lookups by result', () => [
      { labels: { cache: 'key', result: 'hit' }, value: keys.hits },
      { labels: { cache: 'key', result: 'miss' }, value: keys.misses },
      { labels: { cache: 'listing', result: 'hit' }, value: listings.hits },
      { labels: { cache: 'listing', result: 'miss' }, value: listings.misses },
    ]),
    ...stores.gauges,
  ]);
  // One worker serves its own scrape; under the multi-worker supervisor, the supervisor asks each worker over IPC.
  const supervised = process.env.SVC_GATEWAY_WORKER_INDEX !== undefined;
  const metricsListener = supervised
    ? undefined
    : await serveMetrics(base.metrics, 'gateway', registryRenderer(registry), log);
  if (supervised) answerMetricsRequests(registry);
  const app = createServer(uws, pipeline, state, {
    maxRequestBytes: cfg.maxRequestBytes,
    maxHeaderBytes: cfg.maxHeaderBytes,
  });
  // A restarted worker may find its port held by the dead one's TIME_WAIT sockets (this uSockets build sets no
  // SO_REUSEADDR), so a fixed port is retried for up to two minutes before giving up.
  let listenSocket: ListenSocket | false = false;
  for (let attempt = 0; attempt < 240; attempt++) {
    listenSocket = await new Promise<ListenSocket | false>((resolve) => app.listen(base.host, port, resolve));
    if (listenSocket || port === 0) break;
    // A port the supervisor picked (SVC_GATEWAY_PORT=0) and someone took meanwhile: let it pick another.
    if (process.env.SVC_GATEWAY_WORKER_PORT_PICKED === '1') {
      log.warn('picked port was taken; asking the supervisor for another', { host: base.host, port });
      process.exit(PICKED_PORT_TAKEN_EXIT);
    }
    if (attempt === 0) log.warn('port busy; retrying', { host: base.host, port });
    await new Promise((r) => setTimeout(r, 500));
  }
  if (!listenSocket) {
    log.error('could not listen', { host: base.host, port });
    process.exit(1);
  }
  const boundPort = uws.us_socket_local_port(listenSocket);
  const host = base.host === '0.0.0.0' ? '127.0.0.1' : base.host;
  process.stdout.write(
    JSON.stringify({
      ready: 'gateway',
      url: `http://${host}:${boundPort}`,
      port: boundPort,
      metrics_url: metricsListener?.url,
    }) + '\n',
  );
  log.info('gateway listening', {
    port: boundPort,
    metering: cfg.metering,
    server: choice.kind,
    holder: stores.holderId,
    store: base.databaseUrl ? 'postgres' : 'sqlite',
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    state.closing = true;
    log.info('stopping', { signal });
    // Never linger: leases of a process that did not finish its shutdown are reaped by the next worker anyway.
    setTimeout(() => process.exit(1), 15_000);
    uws.us_listen_socket_close(listenSocket);
    const deadline = Date.now() + 10_000;
    while ((state.active > 0 || writer.pending > 0) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await stores.stop();
    log.info('settle writer totals', {
      calls: writer.written,
      transactions: writer.batches,
      lease_acquisitions: leases.acquisitions,
    });
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // Forked by the supervisor: if it dies, stop cleanly rather than linger as an orphan.
  process.on('disconnect', () => void shutdown('supervisor gone'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('unhandledRejection', (e) => {
    if (e instanceof HolderReapedError) stores.fatal('settle refused');
    log.error('unhandled rejection', { err: e as Error });
  });
}
