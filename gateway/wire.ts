/** The pipeline as every worker builds it, over whichever store's parts (worker.ts: SQLite; pg/worker-stores.ts). */
import type { Clock } from '../core/clock.js';
import { egressPolicy } from '../core/egress.js';
import type { Logger } from '../core/log.js';
import type { GatewayConfig } from './config.js';
import type { GatewayMetrics } from './metrics.js';
import { Pipeline, type PipelineDeps } from './pipeline.js';
import { upstreamFailureKind } from './paid-call.js';
import { createUpstreamPool } from './steps/forward.js';

export type StoreParts = Pick<
  PipelineDeps,
  'keys' | 'listings' | 'leases' | 'writer' | 'idem' | 'limiter' | 'signalPressure' | 'termsRefusals'
>;

export function buildPipeline(
  cfg: Readonly<GatewayConfig>,
  log: Logger,
  clock: Clock,
  metrics: GatewayMetrics,
  parts: StoreParts,
): Pipeline {
  return new Pipeline({
    cfg,
    clock,
    ...parts,
    onUpstreamFailure: (slug, requestId, err) => {
      metrics.upstreamErrors.inc([upstreamFailureKind(err)]);
      log.warn('upstream failed', { slug, request_id: requestId, err: err.message });
    },
    upstream: createUpstreamPool({
      connections: cfg.upstreamConnections,
      connectTimeoutMs: cfg.connectTimeoutMs,
      headersTimeoutMs: cfg.headersTimeoutMs,
      bodyTimeoutMs: cfg.bodyTimeoutMs,
      egress: egressPolicy(cfg.base),
    }),
  });
}
