/**
 * Gateway-only settings (SVC_GATEWAY_*), parsed with zod on top of the shared core/config.ts.
 * Defaults suit one machine; every knob is documented in docs/gateway.md.
 */
import { z } from 'zod';
import { loadConfig, ConfigError, type Config } from '../core/config.js';
import { LOCK_RETRY_LIMIT_MS } from './no-wait.js';

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);

const GatewayEnvSchema = z.object({
  /** off = pass-through (benchmark baseline): resolve listing + forward; no auth, caps, ledger or usage. */
  SVC_GATEWAY_METERING: z.enum(['on', 'off']).default('on'),
  /** How often the change feed is polled (PRAGMA data_version): bounds revoke/price/credit latency. */
  SVC_GATEWAY_POLL_MS: int(100, 10),
  /** Largest slice of an org's credit (and a key's caps) one process leases at once. */
  SVC_GATEWAY_LEASE_MAX_CENTS: int(500, 1),
  /** A lease with no call for this long is returned to the org. */
  SVC_GATEWAY_LEASE_IDLE_MS: int(5_000, 100),
  SVC_GATEWAY_HEARTBEAT_MS: int(1_000, 50),
  /** A holder whose heartbeat is older than this is presumed dead; its unspent leases are released. */
  SVC_GATEWAY_STALE_MS: int(5_000, 200),
  /** Per-key calls per minute when the key has no rate_limit_per_min (split across workers). */
  SVC_GATEWAY_DEFAULT_RATE_PER_MIN: int(60_000, 1),
  SVC_GATEWAY_MAX_REQUEST_BYTES: int(10 * 1024 * 1024, 0),
  SVC_GATEWAY_MAX_RESPONSE_BYTES: int(256 * 1024 * 1024, 1),
  SVC_GATEWAY_MAX_HEADER_BYTES: int(8 * 1024, 1024),
  SVC_GATEWAY_CONNECT_TIMEOUT_MS: int(5_000, 1),
  SVC_GATEWAY_HEADERS_TIMEOUT_MS: int(30_000, 1),
  SVC_GATEWAY_BODY_TIMEOUT_MS: int(30_000, 1),
  SVC_GATEWAY_UPSTREAM_CONNECTIONS: int(256, 1),
  SVC_GATEWAY_IDEMPOTENCY_TTL_MS: int(86_400_000, 1_000),
  /** Idempotent calls buffer the upstream body to store it for replay; larger answers are refused (502). */
  SVC_GATEWAY_IDEMPOTENT_BODY_MAX: int(1024 * 1024, 0),
  /** WAL checkpoints run in a worker thread (never on the event loop); this is the longest gap between passes (0 = off). */
  SVC_GATEWAY_CHECKPOINT_MS: int(200, 0),
  /** A pass starts as soon as this many WAL frames wait to be copied, so each pass (and its fsync) stays small. */
  SVC_GATEWAY_CHECKPOINT_FRAMES: int(256, 1),
  /** Above this WAL size the checkpoint thread makes writers start the WAL over (RESTART), not only backfill it. */
  SVC_GATEWAY_WAL_LIMIT_MB: int(64, 1),
  /** How long a call waits for the SQLite write lock held by another connection before it fails, uncharged. */
  SVC_GATEWAY_LOCK_WAIT_MS: int(LOCK_RETRY_LIMIT_MS, 1),
  /** HTTP server: a native uWS build, the JavaScript fallback, or native where one loads (server-choice.ts). */
  SVC_GATEWAY_SERVER: z.enum(['native', 'fallback', 'auto']).default('auto'),
  /** Share of calls written to the access log (0 = none, 1 = every call; docs/operations.md "Logs"). */
  SVC_GATEWAY_ACCESS_LOG_SAMPLE: z.coerce.number().min(0).max(1).default(0),
});

export interface GatewayConfig {
  base: Readonly<Config>;
  metering: boolean;
  pollMs: number;
  leaseMaxCents: number;
  leaseIdleMs: number;
  heartbeatMs: number;
  staleMs: number;
  defaultRatePerMin: number;
  maxRequestBytes: number;
  maxResponseBytes: number;
  maxHeaderBytes: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  upstreamConnections: number;
  idempotencyTtlMs: number;
  idempotentBodyMax: number;
  checkpointMs: number;
  checkpointFrames: number;
  walLimitBytes: number;
  lockWaitMs: number;
  server: 'native' | 'fallback' | 'auto';
  accessLogSample: number;
}

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): Readonly<GatewayConfig> {
  const base = loadConfig(env);
  const parsed = GatewayEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0])}: ${i.message}`);
    throw new ConfigError(`Invalid svc gateway configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return Object.freeze({
    base,
    metering: e.SVC_GATEWAY_METERING === 'on',
    accessLogSample: e.SVC_GATEWAY_ACCESS_LOG_SAMPLE,
    pollMs: e.SVC_GATEWAY_POLL_MS,
    leaseMaxCents: e.SVC_GATEWAY_LEASE_MAX_CENTS,
    leaseIdleMs: e.SVC_GATEWAY_LEASE_IDLE_MS,
    heartbeatMs: e.SVC_GATEWAY_HEARTBEAT_MS,
    staleMs: e.SVC_GATEWAY_STALE_MS,
    defaultRatePerMin: e.SVC_GATEWAY_DEFAULT_RATE_PER_MIN,
    maxRequestBytes: e.SVC_GATEWAY_MAX_REQUEST_BYTES,
    maxResponseBytes: e.SVC_GATEWAY_MAX_RESPONSE_BYTES,
    maxHeaderBytes: e.SVC_GATEWAY_MAX_HEADER_BYTES,
    connectTimeoutMs: e.SVC_GATEWAY_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: e.SVC_GATEWAY_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: e.SVC_GATEWAY_BODY_TIMEOUT_MS,
    upstreamConnections: e.SVC_GATEWAY_UPSTREAM_CONNECTIONS,
    idempotencyTtlMs: e.SVC_GATEWAY_IDEMPOTENCY_TTL_MS,
    idempotentBodyMax: e.SVC_GATEWAY_IDEMPOTENT_BODY_MAX,
    checkpointMs: e.SVC_GATEWAY_CHECKPOINT_MS,
    checkpointFrames: e.SVC_GATEWAY_CHECKPOINT_FRAMES,
    walLimitBytes: e.SVC_GATEWAY_WAL_LIMIT_MB * 1024 * 1024,
    lockWaitMs: e.SVC_GATEWAY_LOCK_WAIT_MS,
    server: e.SVC_GATEWAY_SERVER,
  });
}
