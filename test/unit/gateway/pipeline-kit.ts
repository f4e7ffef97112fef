/** A Pipeline on a test database, without a server: the parts a unit test varies are passed in. */
import type Sqlite from 'better-sqlite3';
import { systemClock } from '../../../core/clock.js';
import { egressPolicy } from '../../../core/egress.js';
import type { SvcError } from '../../../core/errors.js';
import { loadGatewayConfig } from '../../../gateway/config.js';
import { KeyCache } from '../../../gateway/cache/key-cache.js';
import { ListingCache } from '../../../gateway/cache/listing-cache.js';
import { KeyRateLimiter } from '../../../gateway/rate-limiter.js';
import { Pipeline } from '../../../gateway/pipeline.js';
import { createUpstreamPool } from '../../../gateway/steps/forward.js';
import type { SettleWriter } from '../../../gateway/settle-writer.js';
import type { IdempotencyStore } from '../../../gateway/idempotency.js';
import type { LeaseManager } from '../../../gateway/leases.js';
import type { ClientSink, Headers } from '../../../gateway/respond.js';

/** Records each answer's status (and code); the first answer ends the exchange, as a real client's would. */
export class RecordingSink implements ClientSink {
  aborted = false;
  readonly isHead = false;
  answers: { status: number; code?: string }[] = [];
  onAbort(): void {}
  problem(err: SvcError): void {
    this.answers.push({ status: err.status, code: err.code });
    this.aborted = true;
  }
  send(status: number, _headers: Headers, _body: Buffer | string): void {
    this.answers.push({ status });
    this.aborted = true;
  }
  begin(): void {}
  write(): boolean {
    return true;
  }
  onWritable(): void {}
  end(): void {}
  close(): void {}
}

export function unitPipeline(
  sqlite: Sqlite.Database,
  env: Record<string, string>,
  parts: { writer: SettleWriter; idem: IdempotencyStore; leases: LeaseManager },
): Pipeline {
  return new Pipeline({
    cfg: loadGatewayConfig(env),
    clock: systemClock,
    keys: new KeyCache(sqlite),
    listings: new ListingCache(sqlite, null),
    ...parts,
    limiter: new KeyRateLimiter(1),
    upstream: createUpstreamPool({
      connections: 1,
      connectTimeoutMs: 1_000,
      headersTimeoutMs: 1_000,
      bodyTimeoutMs: 1_000,
      egress: egressPolicy({ isProduction: false, egressAllow: [] }),
    }),
    signalPressure: () => {},
  });
}
