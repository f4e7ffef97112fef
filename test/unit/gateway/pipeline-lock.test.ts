/**
 * The pipeline when SQLite's write lock stays held elsewhere past the limit while a call reserves its price:
 * the call fails uncharged, and its Idempotency-Key claim is released so that a retry runs again instead of
 * waiting on a claim "in flight" for up to 24 h.
 */
import { describe, expect, it } from 'vitest';
import Sqlite from '../../../core/db/sqlite-driver.js';
import { useMigratedTempDb, seedOrg, grantCredits, seedListing, usageWithIds } from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';
import { Instances } from '../../../gateway/instances.js';
import { SettleWriter } from '../../../gateway/settle-writer.js';
import { IdempotencyStore } from '../../../gateway/idempotency.js';
import type { LeaseManager } from '../../../gateway/leases.js';
import type { Headers } from '../../../gateway/respond.js';
import { RecordingSink, unitPipeline } from './pipeline-kit.js';

let dir: string;
let h: DbHandles;
useMigratedTempDb((d) => ({ dir, h } = d));

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
    const pipeline = unitPipeline(
      h.sqlite,
      { SVC_DATA_DIR: dir, SVC_GATEWAY_LOCK_WAIT_MS: '200' },
      { writer, idem, leases },
    );
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
    expect(await h.db.selectFrom(usageWithIds(h.db)).select('id').execute()).toEqual([]);
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
