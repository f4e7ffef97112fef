/**
 * The pipeline when SQLite's write lock stays held elsewhere past the limit while a call reserves its price:
 * the call fails uncharged, and its Idempotency-Key claim is released so that a retry runs again instead of
 * waiting on a claim "in flight" for up to 24 h.
 */
import { describe, expect, it } from 'vitest';
import Sqlite from 'better-sqlite3';
import { useMigratedTempDb, seedOrg, grantCredits, seedListing } from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';
import { systemClock } from '../../../core/clock.js';
import { loadGatewayConfig } from '../../../gateway/config.js';
import { KeyCache } from '../../../gateway/cache/key-cache.js';
import { ListingCache } from '../../../gateway/cache/listing-cache.js';
import { Instances } from '../../../gateway/instances.js';
import { SettleWriter } from '../../../gateway/settle-writer.js';
import { IdempotencyStore } from '../../../gateway/idempotency.js';
import { KeyRateLimiter } from '../../../gateway/rate-limiter.js';
import { Pipeline } from '../../../gateway/pipeline.js';
import { createUpstreamPool } from '../../../gateway/steps/forward.js';
import { egressPolicy } from '../../../core/egress.js';
import type { LeaseManager } from '../../../gateway/leases.js';
import type { ClientSink, Headers } from '../../../gateway/respond.js';
import type { SvcError } from '../../../core/errors.js';

let dir: string;
let h: DbHandles;
useMigratedTempDb((d) => ({ dir, h } = d));

class RecordingSink implements ClientSink {
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

describe('pipeline under a write lock held elsewhere', () => {
  it('a reservation that gives up on the lock leaves no Idempotency-Key claim behind and charges nothing', async () => {
    const provider = await seedOrg(h);
    const consumer = await seedOrg(h);
    await grantCredits(h, consumer.orgId, 100);
    await seedListing(h, {
      orgId: provider.orgId,
      slug: 'locked',
      baseUrl: 'http://127.0.0.1:1',
      endpoints: [{ method: 'POST', path: '/x', priceCents: 5 }],
    });
    const cfg = loadGatewayConfig({ SVC_DATA_DIR: dir, SVC_GATEWAY_LOCK_WAIT_MS: '200' });
    const inst = new Instances(h.sqlite, Date.now());
    const writer = new SettleWriter(h.sqlite, { holderId: inst.id, platformFeeBps: 0 });
    const idem = new IdempotencyStore(h.sqlite, writer, inst.id, 60_000, (e) => {
      throw e;
    });
    // A lease manager whose database transaction always finds the lock taken (as when another process holds it).
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    Object.setPrototypeOf(busy, Sqlite.SqliteError.prototype);
    const leases = {
      reserve: () => {
        throw busy;
      },
    } as unknown as LeaseManager;
    const pipeline = new Pipeline({
      cfg,
      clock: systemClock,
      keys: new KeyCache(h.sqlite),
      listings: new ListingCache(h.sqlite, null),
      leases,
      writer,
      idem,
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
    const call = (requestId: string) => {
      const sink = new RecordingSink();
      const headers: Headers = [
        ['authorization', `Bearer ${consumer.key}`],
        ['idempotency-key', 'retry-me'],
      ];
      return {
        sink,
        done: pipeline.handle(
          { method: 'POST', url: '/locked/x', query: '', headers, body: Buffer.from('{}'), requestId },
          sink,
        ),
      };
    };
    const first = call('req_first');
    await expect(first.done).rejects.toThrow(/locked/);
    // No claim is left: a retry with the same key is not told "in flight" but runs again (and meets the lock again).
    const rows = await h.db.selectFrom('idempotency_records').selectAll().execute();
    expect(rows).toEqual([]);
    const second = call('req_second');
    await expect(second.done).rejects.toThrow(/locked/);
    expect(second.sink.answers).toEqual([]);
    expect(await h.db.selectFrom('usage_events').select('id').execute()).toEqual([]);
    expect(
      (
        await h.db
          .selectFrom('balances')
          .select('credit_cents')
          .where('org_id', '=', consumer.orgId)
          .executeTakeFirstOrThrow()
      ).credit_cents,
    ).toBe(100);
  }, 20_000);
});
