/**
 * A gateway worker on PostgreSQL (SVC_DATABASE_URL): the gateway/pg stores wired around the same pipeline as on
 * SQLite, plus the timers a holder owes the fleet:
 * - heartbeat every `SVC_GATEWAY_HEARTBEAT_MS` (the database's clock); refused = this holder was reaped (a
 *   partition or stall longer than `SVC_GATEWAY_STALE_MS`): exit 1, the supervisor starts a new holder;
 * - housekeeping on the same period: reap dead holders (any node may), return idle slices, fold this holder's
 *   unfolded spend into the shared rows, refresh the live holder count (lease sizing and rate-limit shares).
 * A database that does not answer makes a round fail and log; the next round tries again, so the node comes back
 * by itself when PostgreSQL does (paid calls fail uncharged meanwhile; cached free calls keep working).
 */
import { offsetClock, utcDay } from '../../core/clock.js';
import { openPostgres } from '../../core/db/database.js';
import { migrateToLatest } from '../../core/db/migrate.js';
import type { Logger } from '../../core/log.js';
import { loadSecretKey } from '../../core/secret-key.js';
import { KeyCache } from '../cache/key-cache.js';
import { ListingCache } from '../cache/listing-cache.js';
import type { GatewayConfig } from '../config.js';
import { KeyRateLimiter } from '../rate-limiter.js';
import { buildPipeline } from '../wire.js';
import { GatewayMetrics } from '../metrics.js';
import type { WorkerStores } from '../worker.js';
import { PgChangeFeed, pgFeedReads, recordChange } from './change-feed.js';
import { Pg } from './connect.js';
import { PgHolders } from './holders.js';
import { PgIdempotency } from './idempotency.js';
import { PgLeaseManager } from './leases.js';
import { pgKeySource, pgListingSource } from './lookups.js';
import { PgSettleWriter } from './settle-writer.js';
import { PgTermsRefusals } from './terms-refusals.js';

// Long: wiring: opens the PostgreSQL pool and builds every store the worker needs from it, in dependency order.
export async function openPgStores(
  cfg: Readonly<GatewayConfig>,
  url: string,
  workerIndex: number,
  log: Logger,
): Promise<WorkerStores> {
  const base = cfg.base;
  const metrics = new GatewayMetrics();
  // Every process migrates at start (kysely's Migrator holds a session advisory lock: concurrent starts apply once).
  const mig = openPostgres(url, { max: 1 });
  try {
    await migrateToLatest(mig.db);
  } finally {
    await mig.close();
  }
  const db = new Pg(url, { max: 3, lockWaitMs: cfg.lockWaitMs, application: `svc-gateway-${workerIndex}` });
  const clock = offsetClock(base.env === 'development' ? base.clockOffsetFile : undefined);
  const secretKey = loadSecretKey(base);
  const bg = (what: string) => (e: unknown) => log.warn(`${what} failed`, { err: e as Error });

  const holders = await PgHolders.register(db, Date.now());
  const reaped = await holders.reapDead(Date.now(), cfg.staleMs);
  if (reaped > 0) log.info("released dead holders' leases", { cents: reaped });
  let live = await holders.liveCount();

  const keys = new KeyCache(pgKeySource(db));
  const listings = new ListingCache(pgListingSource(db), secretKey);
  const leases = new PgLeaseManager(db, holders.id, {
    liveHolders: () => live,
    maxChunkCents: cfg.leaseMaxCents,
    idleMs: cfg.leaseIdleMs,
  });
  const writer = new PgSettleWriter(db, {
    holderId: holders.id,
    platformFeeBps: base.platformFeeBps,
    onCommitted: (records) => {
      for (const r of records) {
        if (r.leaseId !== null && r.chargedCents > 0) leases.committed(r.leaseId, r.chargedCents);
        metrics.settled(r);
      }
    },
    onLateCommit: (records) => {
      for (const r of records)
        if (r.leaseId !== null && r.chargedCents > 0) leases.committedLate(r.leaseId, r.chargedCents);
      log.warn('settles whose commit outcome was unknown did commit (charged, answered 500)', {
        calls: records.length,
      });
    },
    onError: bg('settle batch'),
  });
  const feed = await PgChangeFeed.open(
    pgFeedReads(db),
    url,
    (rows) => {
      for (const r of rows) {
        if (r.entity === 'key') {
          keys.dropKey(r.entity_id);
          leases.shrinkWhere((l) => l.keyId === r.entity_id, clock.now()).catch(bg('lease shrink'));
        } else if (r.entity === 'org') {
          keys.dropOrg(r.entity_id);
          leases.shrinkWhere((l) => l.orgId === r.entity_id, clock.now()).catch(bg('lease shrink'));
        } else if (r.entity === 'api') listings.dropApi(r.entity_id);
        else listings.dropTerms(r.entity_id);
      }
    },
    () => keys.clearUnknown(),
    bg('change feed'),
  );
  const pressureAt = new Map<string, number>();
  const pipeline = buildPipeline(cfg, log, clock, metrics, {
    keys,
    listings,
    leases,
    writer,
    idem: new PgIdempotency(db, holders.id, cfg.idempotencyTtlMs, bg('idempotency release')),
    termsRefusals: new PgTermsRefusals(db, bg('recording a terms refusal')),
    limiter: new KeyRateLimiter(() => live), // every worker is a holder: `live` counts the fleet's workers
    signalPressure(orgId) {
      const now = clock.now();
      if ((pressureAt.get(orgId) ?? 0) > now - cfg.pollMs) return;
      pressureAt.set(orgId, now);
      db.rows(recordChange('org', orgId, now)).catch(bg('pressure signal'));
    },
  });
  feed.start(cfg.metering ? cfg.pollMs : Math.max(cfg.pollMs, 250));

  let stopped = false;
  const fatal = (why: string) => {
    log.error('stopping: this holder was reaped by another process', { why });
    process.exit(1);
  };
  let beating = false;
  const heartbeat = setInterval(() => {
    if (beating || stopped) return;
    beating = true;
    holders
      .heartbeat()
      .then((ok) => {
        if (!ok && !stopped) fatal('heartbeat refused');
      }, bg('heartbeat'))
      .finally(() => {
        beating = false;
      });
  }, cfg.heartbeatMs);
  heartbeat.unref();
  let housekeeping = false;
  const house = setInterval(() => {
    if (housekeeping || stopped) return;
    housekeeping = true;
    const now = clock.now();
    (async () => {
      await holders.reapDead(Date.now(), cfg.staleMs);
      await leases.releaseIdle(now, utcDay(now));
      await leases.foldOpen(now);
      live = await holders.liveCount();
    })()
      .catch(bg('housekeeping'))
      .finally(() => {
        housekeeping = false;
      });
  }, cfg.heartbeatMs);
  house.unref();

  return {
    holderId: holders.id,
    metrics,
    keys,
    listings,
    gauges: [],
    pipeline,
    feed,
    writer,
    leases,
    async stop() {
      stopped = true;
      clearInterval(heartbeat);
      clearInterval(house);
      try {
        await writer.flush(true);
      } catch (e) {
        log.error('final settle batch failed', { err: e as Error });
      }
      feed.stop();
      try {
        await leases.releaseAll(clock.now());
        await holders.markStopped();
      } catch (e) {
        log.error('releasing leases failed', { err: e as Error });
      }
      await db.end().catch(() => {});
    },
    fatal,
  };
}
