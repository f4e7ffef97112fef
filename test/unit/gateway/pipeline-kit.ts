/** A Pipeline on a test database, without a server: the parts a unit test varies are passed in. */
import type Sqlite from 'better-sqlite3';
import { systemClock, utcDay } from '../../../core/clock.js';
import { egressPolicy } from '../../../core/egress.js';
import type { SvcError } from '../../../core/errors.js';
import { loadGatewayConfig } from '../../../gateway/config.js';
import { KeyCache } from '../../../gateway/cache/key-cache.js';
import { ListingCache } from '../../../gateway/cache/listing-cache.js';
import { KeyRateLimiter } from '../../../gateway/rate-limiter.js';
import { Pipeline } from '../../../gateway/pipeline.js';
import { createUpstreamPool } from '../../../gateway/steps/forward.js';
import type { SettleRecord, SettleWriter } from '../../../gateway/settle-writer.js';
import type { IdempotencyStore } from '../../../gateway/idempotency.js';
import type { LeaseManager } from '../../../gateway/leases.js';
import type { ClientSink, Headers } from '../../../gateway/respond.js';
import type { DbHandles } from '../../../core/db/database.js';
import { grantCredits, seedKey, seedListing, seedOrg } from '../../helpers/db.js';

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

/**
 * The parties of one gateway call: a provider with a one-endpoint listing (GET /x at `priceCents`, on an upstream
 * nobody listens on) and a consumer org with `credit` cents and a key.
 */
export async function seedCallParties(
  h: DbHandles,
  o: { credit: number; priceCents: number; keyOpts?: Parameters<typeof seedKey>[2] },
) {
  const provider = await seedOrg(h);
  const consumer = await seedOrg(h);
  if (o.credit) await grantCredits(h, consumer.orgId, o.credit);
  const key = await seedKey(h, consumer.orgId, o.keyOpts ?? {});
  const { apiId, endpointIds } = await seedListing(h, {
    orgId: provider.orgId,
    slug: `c-${Math.random().toString(36).slice(2, 8)}`,
    baseUrl: 'http://127.0.0.1:1',
    endpoints: [{ method: 'GET', path: '/x', priceCents: o.priceCents }],
  });
  /** The settle record of one answered 200 call at `now` by these parties. */
  const record = (now: number, requestId: string, leaseId: string | null, chargedCents: number): SettleRecord => ({
    requestId,
    orgId: consumer.orgId,
    keyId: key.keyId,
    apiId,
    endpointId: endpointIds[0]!,
    providerOrgId: provider.orgId,
    method: 'GET',
    status: 200,
    latencyMs: 1,
    priceCents: o.priceCents,
    chargedCents,
    errorCode: null,
    createdAt: now,
    leaseId,
    day: utcDay(now),
  });
  return { provider, consumer, key, apiId, endpointIds, record };
}
