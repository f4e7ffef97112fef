/**
 * Idempotency-Key claims joined to the settle writer's group commit (gateway/idempotency.ts): a turn's claims and
 * settles are one transaction, a claim counts only once committed, and the guarantees stay: a key is never
 * forwarded twice, a retry after the first call completed replays, a dead holder's unfinished claim is freed.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { useMigratedTempDb, seedKey, usageWithIds } from '../../helpers/db.js';
import { openSqlite, type DbHandles } from '../../../core/db/database.js';
import { SettleWriter, type SettleRecord } from '../../../gateway/settle-writer.js';
import { IdempotencyStore } from '../../../gateway/idempotency.js';
import { Instances } from '../../../gateway/instances.js';
import { isBusy } from '../../../gateway/no-wait.js';
import type { LeaseManager } from '../../../gateway/leases.js';
import type { Headers } from '../../../gateway/respond.js';
import { RecordingSink, seedCallParties, unitPipeline } from './pipeline-kit.js';

let dir: string;
let h: DbHandles;
useMigratedTempDb((d) => ({ dir, h } = d));

async function arrange(lockWaitLimitMs?: number) {
  const { consumer: c, record } = await seedCallParties(h, { credit: 100, priceCents: 0 });
  const now = Date.now();
  const inst = new Instances(h.sqlite, now);
  const writer = new SettleWriter(h.sqlite, {
    holderId: inst.id,
    platformFeeBps: 0,
    ...(lockWaitLimitMs === undefined ? {} : { lockWaitLimitMs }),
  });
  const idem = new IdempotencyStore(h.sqlite, writer, inst.id, 60_000, (e) => {
    throw e;
  });
  const rec = (requestId: string, leaseId: string | null = null, charged = 0): SettleRecord =>
    record(now, requestId, leaseId, charged);
  const claim = (key: string, requestId: string, hash = 'h1') => idem.claim(c.orgId, key, hash, requestId, () => now);
  /** The idempotency completion a settle carries for `idemKey`. */
  const completion = (idemKey: string, status: number, headers: [string, string][], body: string) => ({
    orgId: c.orgId,
    idemKey,
    status,
    headersJson: JSON.stringify(headers),
    body: Buffer.from(body),
  });
  const claimsOnDisk = () =>
    h.db.selectFrom('idempotency_records').select(['idem_key', 'request_id', 'state']).orderBy('idem_key').execute();
  return { c, inst, writer, idem, rec, claim, completion, claimsOnDisk, now };
}

describe('Idempotency-Key claims in the group commit', () => {
  it("commits a turn's claims with its settles in one transaction, and a claim counts only after that commit", async () => {
    const a = await arrange();
    const other = openSqlite(join(dir, 'svc.db'));
    try {
      const batchesBefore = a.writer.batches;
      const pending = Promise.all([a.writer.settle(a.rec('req_s')), a.claim('k1', 'req_1'), a.claim('k2', 'req_2')]);
      // Nothing is written before the batch runs: another process cannot see the claim yet, so it is not one.
      expect(other.prepare('SELECT COUNT(*) FROM idempotency_records').pluck().get()).toBe(0);
      const [, c1, c2] = await pending;
      expect([c1.kind, c2.kind]).toEqual(['new', 'new']);
      expect(a.writer.batches - batchesBefore).toBe(1);
      expect(other.prepare('SELECT COUNT(*) FROM idempotency_records').pluck().get()).toBe(2);
      expect(other.prepare("SELECT COUNT(*) FROM usage_calls WHERE request_id = 'req_s'").pluck().get()).toBe(1);
    } finally {
      other.close();
    }
  });

  it('two claims of one key in one turn: the first runs, the second finds it in flight (never forwarded twice)', async () => {
    const a = await arrange();
    const [first, second] = await Promise.all([a.claim('dup', 'req_a'), a.claim('dup', 'req_b')]);
    expect(first.kind).toBe('new');
    expect(second.kind).toBe('in_flight');
    expect(await a.claimsOnDisk()).toEqual([{ idem_key: 'dup', request_id: 'req_a', state: 'in_flight' }]);
  });

  it('a retry joined to the turn in which the first call completes replays its outcome', async () => {
    const a = await arrange();
    expect((await a.claim('job', 'req_first')).kind).toBe('new');
    const done = a.rec('req_first');
    done.idempotency = a.completion('job', 201, [['content-type', 'text/plain']], 'made');
    const [, retry] = await Promise.all([a.writer.settle(done), a.claim('job', 'req_retry')]);
    expect(retry).toMatchObject({ kind: 'replay', requestId: 'req_first', status: 201 });
    expect(retry.kind === 'replay' && retry.body.toString()).toBe('made');
    // A different request under the same key is refused, not replayed.
    expect((await a.claim('job', 'req_other', 'h2')).kind).toBe('conflict');
  });

  it("a failing settle in the batch does not take its neighbours' claims down with it", async () => {
    const a = await arrange();
    const [bad, claimed] = await Promise.allSettled([
      a.writer.settle(a.rec('req_bad', 'lease_missing', 5)),
      a.claim('ok', 'req_ok'),
    ]);
    expect(bad.status).toBe('rejected');
    expect(claimed).toEqual({ status: 'fulfilled', value: { kind: 'new' } });
    expect(await a.claimsOnDisk()).toEqual([{ idem_key: 'ok', request_id: 'req_ok', state: 'in_flight' }]);
  });

  it('a claim that cannot get the write lock within the limit fails with SQLITE_BUSY and leaves no claim', async () => {
    const a = await arrange(300);
    const other = openSqlite(join(dir, 'svc.db'));
    other.exec('BEGIN IMMEDIATE');
    try {
      const outcome = await a.claim('locked', 'req_l').then(
        () => 'claimed',
        (e: unknown) => (isBusy(e) ? 'busy' : String(e)),
      );
      expect(outcome).toBe('busy');
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(await a.claimsOnDisk()).toEqual([]);
    // Once the lock is free the same key is claimed normally.
    expect((await a.claim('locked', 'req_l2')).kind).toBe('new');
  });

  it('a holder that dies between claim and completion: the reaper frees its claim, so a retry runs; a completed one still replays', async () => {
    const a = await arrange();
    expect((await a.claim('unfinished', 'req_u')).kind).toBe('new');
    expect((await a.claim('finished', 'req_f')).kind).toBe('new');
    const done = a.rec('req_f');
    done.idempotency = a.completion('finished', 200, [], 'ok');
    await a.writer.settle(done);
    // The holder stops heartbeating (crashed); another gateway process reaps it.
    await h.db.updateTable('gateway_instances').set({ heartbeat_at: 0 }).where('id', '=', a.inst.id).execute();
    const survivor = new Instances(h.sqlite, Date.now());
    survivor.reapDead(Date.now(), 1_000);
    const writer = new SettleWriter(h.sqlite, { holderId: survivor.id, platformFeeBps: 0 });
    const idem = new IdempotencyStore(h.sqlite, writer, survivor.id, 60_000, (e) => {
      throw e;
    });
    const now = () => Date.now();
    expect((await idem.claim(a.c.orgId, 'unfinished', 'h1', 'req_retry', now)).kind).toBe('new');
    expect(await idem.claim(a.c.orgId, 'finished', 'h1', 'req_retry2', now)).toMatchObject({
      kind: 'replay',
      requestId: 'req_f',
    });
  });

  it('a call still in flight past the TTL keeps its claim (never forwarded twice); a completed one expires', async () => {
    const a = await arrange();
    const later = () => a.now + 60_000 + 1;
    expect((await a.claim('slow', 'req_slow')).kind).toBe('new');
    // The TTL (SVC_GATEWAY_IDEMPOTENCY_TTL_MS, 1 s at least) ran out while the first call still waits on its upstream.
    expect((await a.idem.claim(a.c.orgId, 'slow', 'h1', 'req_retry', later)).kind).toBe('in_flight');
    expect((await a.claim('quick', 'req_quick')).kind).toBe('new');
    const done = a.rec('req_quick');
    done.idempotency = a.completion('quick', 200, [], 'ok');
    await a.writer.settle(done);
    expect((await a.idem.claim(a.c.orgId, 'quick', 'h1', 'req_fresh', later)).kind).toBe('new');
  });

  it("a claim still queued when shutdown flushes is refused, not committed: its call would run past the holder's stop", async () => {
    const a = await arrange();
    const settled = a.writer.settle(a.rec('req_answered'));
    const late = a.claim('late', 'req_late');
    // Shutdown's last flush (worker.ts): answered calls are recorded, but a claim committed now would only let its
    // call be forwarded after the holder marked itself stopped (and dropped its claims), with nothing to settle it.
    a.writer.flush(true);
    await expect(settled).resolves.toBeTypeOf('number');
    await expect(late).rejects.toThrow(/stopping/);
    expect(await a.claimsOnDisk()).toEqual([]);
  });

  it("a holder that stops cleanly with a call still in flight frees that call's claim, so a retry elsewhere runs", async () => {
    const a = await arrange();
    expect((await a.claim('stopped', 'req_s')).kind).toBe('new');
    // Shutdown's drain ran out with this call still waiting on its upstream: the process marks itself stopped and
    // exits. A stopped holder is never reaped (it is not live), so nothing else would ever free the claim.
    a.inst.markStopped(Date.now());
    const survivor = new Instances(h.sqlite, Date.now());
    survivor.reapDead(Date.now(), 1_000);
    const writer = new SettleWriter(h.sqlite, { holderId: survivor.id, platformFeeBps: 0 });
    const idem = new IdempotencyStore(h.sqlite, writer, survivor.id, 60_000, (e) => {
      throw e;
    });
    expect((await idem.claim(a.c.orgId, 'stopped', 'h1', 'req_retry', () => Date.now())).kind).toBe('new');
  });

  it('a client that leaves while its claim is committing is not forwarded, and its key is free again', async () => {
    const a = await arrange();
    const slug = (await h.db.selectFrom('apis').select('slug').orderBy('created_at', 'desc').executeTakeFirstOrThrow())
      .slug;
    const consumerKey = (await seedKey(h, a.c.orgId)).key;
    // A free endpoint reserves nothing: no lease manager is needed.
    const pipeline = unitPipeline(
      h.sqlite,
      { SVC_DATA_DIR: dir },
      { writer: a.writer, idem: a.idem, leases: {} as LeaseManager },
    );
    const sink = new RecordingSink();
    const headers: Headers = [
      ['authorization', `Bearer ${consumerKey}`],
      ['idempotency-key', 'gone'],
    ];
    const done = pipeline.handle(
      { method: 'GET', url: `/${slug}/x`, query: '', headers, body: null, requestId: 'req_gone' },
      sink,
    );
    // The claim is queued for the next group commit; the client leaves before it commits.
    sink.aborted = true;
    await done;
    expect(sink.answers).toEqual([]);
    // Not forwarded (a forwarded call to this unreachable upstream would leave a usage row), and the key is free.
    expect(await h.db.selectFrom(usageWithIds(h.db)).select('id').execute()).toEqual([]);
    expect(await a.claimsOnDisk()).toEqual([]);
  });
});
