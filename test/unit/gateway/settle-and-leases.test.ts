import { describe, expect, it } from 'vitest';
import {
  useMigratedTempDb,
  seedOrg,
  seedKey,
  grantCredits,
  expectLedgerConsistent,
  usageWithIds,
} from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';
import { SettleWriter, HolderReapedError, type SettleRecord } from '../../../gateway/settle-writer.js';
import { LeaseManager } from '../../../gateway/leases.js';
import { Instances } from '../../../gateway/instances.js';
import { KeyCache } from '../../../gateway/cache/key-cache.js';
import { utcDay } from '../../../core/clock.js';
import { openSqlite } from '../../../core/db/database.js';
import { join } from 'node:path';
import { isBusy, neverWait, waitingForLock } from '../../../gateway/no-wait.js';
import { seedCallParties } from './pipeline-kit.js';

let dir: string;
let h: DbHandles;
useMigratedTempDb((d) => ({ dir, h } = d));

/** Another connection (think: the checkpoint thread's RESTART, or the control plane) holding the write lock. */
function holdWriteLock(): ReturnType<typeof openSqlite> {
  const other = openSqlite(join(dir, 'svc.db'));
  other.exec('BEGIN IMMEDIATE');
  return other;
}

/** Waits `ms` on 5 ms timers; the longest gap between two of them is how long the event loop was blocked. */
async function longestTimerGap(ms: number): Promise<number> {
  let longest = 0;
  let last = Date.now();
  const until = Date.now() + ms;
  while (Date.now() < until) {
    await new Promise((res) => setTimeout(res, 5));
    longest = Math.max(longest, Date.now() - last);
    last = Date.now();
  }
  return longest;
}

/** What a 5-cent lease reservation throws (null when it returns). */
function reserveError(a: Awaited<ReturnType<typeof arrange>>): unknown {
  try {
    a.leases.reserve(a.key, utcDay(a.now), 5, a.now);
    return null;
  } catch (e) {
    return e;
  }
}

async function arrange(credit: number, keyOpts: Parameters<typeof seedKey>[2] = {}) {
  const {
    provider,
    consumer: c,
    key: k,
    record,
  } = await seedCallParties(h, {
    credit,
    priceCents: 5,
    keyOpts,
  });
  const now = Date.now();
  const inst = new Instances(h.sqlite, now);
  const leases = new LeaseManager(h.sqlite, inst.id, { workers: 2, maxChunkCents: 20, idleMs: 1000 });
  const writer = new SettleWriter(h.sqlite, {
    holderId: inst.id,
    platformFeeBps: 2000,
    onCommitted: (rs) => {
      for (const r of rs) if (r.leaseId) leases.committed(r.leaseId, r.chargedCents);
    },
  });
  const key = new KeyCache(h.sqlite).byHash(
    (await h.db.selectFrom('api_keys').select('key_hash').where('id', '=', k.keyId).executeTakeFirstOrThrow()).key_hash,
  )!;
  const rec = (leaseId: string | null, charged: number, i: number): SettleRecord =>
    record(now, `req_${i}`, leaseId, charged);
  const bal = () =>
    h.db
      .selectFrom('balances')
      .select(['credit_cents', 'reserved_cents'])
      .where('org_id', '=', c.orgId)
      .executeTakeFirstOrThrow();
  return { c, k, key, inst, leases, writer, rec, bal, now, provider };
}

describe('SettleWriter (group commit)', () => {
  it('writes one turn of settles in one transaction and resolves each after the commit', async () => {
    const a = await arrange(100);
    const day = utcDay(a.now);
    const r = a.leases.reserve(a.key, day, 5, a.now);
    expect(r.ok).toBe(true);
    const lease = (r as { ok: true; lease: { id: string } }).lease;
    for (let i = 0; i < 3; i++) if (i > 0) expect(a.leases.reserve(a.key, day, 5, a.now).ok).toBe(true);
    const balances = await Promise.all([0, 1, 2].map((i) => a.writer.settle(a.rec(lease.id, 5, i))));
    expect(balances).toEqual([95, 90, 85]);
    expect(a.writer.written).toBe(3);
    expect((await a.bal()).credit_cents).toBe(85);
    // Three usage rows; the money as one ledger entry and one provider earning for the commit.
    expect(await h.db.selectFrom(usageWithIds(h.db)).select('id').orderBy('id').execute()).toEqual([
      { id: 'req_0' },
      { id: 'req_1' },
      { id: 'req_2' },
    ]);
    const entries = await h.db.selectFrom('ledger_entries').selectAll().where('kind', '=', 'call_charge').execute();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      org_id: a.c.orgId,
      key_id: a.k.keyId,
      amount_cents: -15,
      reason: '3 calls',
      ref_type: 'usage_batch',
    });
    const earn = await h.db
      .selectFrom('provider_earnings')
      .select(['provider_org_id', 'gross_cents', 'fee_cents', 'net_cents', 'ref_id'])
      .execute();
    expect(earn).toEqual([
      { provider_org_id: a.provider.orgId, gross_cents: 15, fee_cents: 3, net_cents: 12, ref_id: entries[0]!.ref_id },
    ]);
    await expectLedgerConsistent(h);
    a.leases.releaseAll(Date.now());
    expect((await a.bal()).reserved_cents).toBe(0);
  });

  it('waits one more turn for calls still in flight, never two; with none in flight a turn commits alone', async () => {
    const a = await arrange(100);
    const tick = () => new Promise<void>((r) => setImmediate(r));
    const reasons = async () =>
      (
        await h.db
          .selectFrom('ledger_entries')
          .select('reason')
          .where('kind', '=', 'call_charge')
          .orderBy('created_at')
          .orderBy('id')
          .execute()
      ).map((e) => e.reason);
    // Five calls in flight: the first turn's settle waits a turn and shares the second turn's commit; the third
    // turn's settle starts a new batch (a batch waits at most one turn).
    let inFlight = 5;
    a.writer.countInFlight(() => inFlight);
    const first = [a.writer.settle(a.rec(null, 5, 0))];
    await tick();
    first.push(a.writer.settle(a.rec(null, 5, 1)));
    await tick();
    const third = a.writer.settle(a.rec(null, 5, 2));
    expect(await Promise.all(first)).toEqual([95, 90]);
    expect(a.writer.batches).toBe(1);
    expect(await third).toBe(85);
    expect(a.writer.batches).toBe(2);
    expect(await reasons()).toEqual(['2 calls', '1 call']);
    // Only the calls already queued are in flight: nothing to wait for, each turn commits its own.
    inFlight = 1;
    const lone = a.writer.settle(a.rec(null, 5, 3));
    await tick();
    const next = a.writer.settle(a.rec(null, 5, 4));
    expect(await Promise.all([lone, next])).toEqual([80, 75]);
    expect(a.writer.batches).toBe(4);
    // A joined write (an Idempotency-Key claim) is a call that reached the writer: a settle and a claim of two calls
    // in flight commit in their own turn.
    inFlight = 2;
    let claimRan = false;
    const settled = a.writer.settle(a.rec(null, 5, 5));
    const claimed = a.writer.join(() => {
      claimRan = true;
    });
    await tick();
    expect(claimRan).toBe(true);
    await Promise.all([settled, claimed]);
    expect(a.writer.batches).toBe(5);
    // A direct flush while a batch waits its extra turn writes it at once; the waiting turn then finds nothing, and a
    // later settle is batched and committed as usual.
    inFlight = 5;
    const early = a.writer.settle(a.rec(null, 5, 6));
    await tick();
    a.writer.flush();
    expect(await early).toBe(65);
    expect(a.writer.pending).toBe(0);
    const later = a.writer.settle(a.rec(null, 5, 7));
    expect(await later).toBe(60);
    expect(a.writer.pending).toBe(0);
    expect(a.writer.batches).toBe(7);
    await expectLedgerConsistent(h);
  });

  it("tells each call of a mixed commit its org's credit right after it: leased, unleased, free, another org", async () => {
    const a = await arrange(100);
    const other = await seedOrg(h);
    await grantCredits(h, other.orgId, 70, 'test');
    const r = a.leases.reserve(a.key, utcDay(a.now), 5, a.now);
    expect(r.ok).toBe(true);
    const lease = (r as { ok: true; lease: { id: string } }).lease;
    // The lease holds 20 of the 100 (maxChunkCents): 80 are free for the unleased charge.
    const balances = await Promise.all([
      a.writer.settle(a.rec(lease.id, 5, 0)),
      a.writer.settle(a.rec(null, 4, 1)),
      a.writer.settle(a.rec(null, 0, 2)),
      // An org with no charge in the commit: its credit is read, not returned by an update.
      a.writer.settle({ ...a.rec(null, 0, 3), orgId: other.orgId }),
    ]);
    expect(balances).toEqual([95, 91, 91, 70]);
    expect((await a.bal()).credit_cents).toBe(91);
    await expectLedgerConsistent(h);
  });

  it('takes the platform fee per call (rounded down each time), so batching never changes what a provider nets', async () => {
    const a = await arrange(100);
    // 20 % of 4 cents is 0.8: each call's fee rounds down to 0, whether the calls commit together or apart.
    await Promise.all([0, 1, 2].map((i) => a.writer.settle({ ...a.rec(null, 4, i), priceCents: 4 })));
    await a.writer.settle({ ...a.rec(null, 4, 3), priceCents: 4 });
    const earn = await h.db
      .selectFrom('provider_earnings')
      .select(['gross_cents', 'fee_cents', 'net_cents'])
      .orderBy('gross_cents')
      .execute();
    expect(earn).toEqual([
      { gross_cents: 4, fee_cents: 0, net_cents: 4 },
      { gross_cents: 12, fee_cents: 0, net_cents: 12 },
    ]);
    await expectLedgerConsistent(h);
  });

  it('books each provider its own earning, even for calls to the same API id in one commit', async () => {
    const a = await arrange(100);
    const other = await seedOrg(h);
    await Promise.all([
      a.writer.settle(a.rec(null, 5, 1)),
      a.writer.settle({ ...a.rec(null, 5, 2), providerOrgId: other.orgId }),
    ]);
    const earn = await h.db
      .selectFrom('provider_earnings')
      .select(['provider_org_id', 'gross_cents'])
      .orderBy('provider_org_id')
      .execute();
    expect(earn).toEqual(
      [
        { provider_org_id: a.provider.orgId, gross_cents: 5 },
        { provider_org_id: other.orgId, gross_cents: 5 },
      ].sort((x, y) => x.provider_org_id.localeCompare(y.provider_org_id)),
    );
    await expectLedgerConsistent(h);
  });

  it('isolates a bad record: its neighbours in the batch still commit', async () => {
    const a = await arrange(100);
    const results = await Promise.allSettled([
      a.writer.settle(a.rec(null, 5, 1)),
      a.writer.settle(a.rec('lease_missing', 5, 2)),
      a.writer.settle(a.rec(null, 0, 3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await a.bal()).credit_cents).toBe(95);
    await expectLedgerConsistent(h);
  });

  it('refuses to settle once this holder was reaped by another process', async () => {
    const a = await arrange(100);
    await h.db.updateTable('gateway_instances').set({ stopped_at: Date.now() }).where('id', '=', a.inst.id).execute();
    await expect(a.writer.settle(a.rec(null, 5, 1))).rejects.toBeInstanceOf(HolderReapedError);
    expect((await a.bal()).credit_cents).toBe(100);
  });
});

describe('lock contention never sleeps on the event loop', () => {
  it('a settle waits for a lock held by another connection without blocking timers, then commits', async () => {
    const a = await arrange(100);
    const r = a.leases.reserve(a.key, utcDay(a.now), 5, a.now);
    expect(r.ok).toBe(true);
    const lease = (r as { ok: true; lease: { id: string } }).lease;
    const other = holdWriteLock();
    let committedAt = 0;
    const settled = a.writer.settle(a.rec(lease.id, 5, 1)).then((b) => {
      committedAt = Date.now();
      return b;
    });
    // Timers keep firing while the lock is held. SQLite's busy handler would sleep here instead, for its whole
    // busy_timeout (5 s): the loop would be stopped for the entire window. The bound leaves room for a loaded
    // machine's scheduling (gaps of ~600 ms were seen at load average 9) and still catches that.
    const gap = await longestTimerGap(1_500);
    expect(committedAt).toBe(0);
    expect(a.writer.pending).toBe(1);
    expect(gap).toBeLessThan(1_000);
    other.exec('COMMIT');
    const releasedAt = Date.now();
    expect(await settled).toBe(95);
    expect(committedAt - releasedAt).toBeLessThan(1_000);
    expect((await a.bal()).credit_cents).toBe(95);
    await expectLedgerConsistent(h);
    other.close();
  });

  it('a lock held past the limit fails the whole waiting batch at once, writes nothing and never blocks the loop', async () => {
    const a = await arrange(100);
    const r = a.leases.reserve(a.key, utcDay(a.now), 5, a.now);
    expect(r.ok).toBe(true);
    const lease = (r as { ok: true; lease: { id: string } }).lease;
    // A limit longer than the bound below: a writer that slept on the loop for it would fail the bound.
    const writer = new SettleWriter(h.sqlite, { holderId: a.inst.id, platformFeeBps: 2000, lockWaitLimitMs: 1_500 });
    const other = holdWriteLock();
    try {
      const outcomes = [1, 2, 3].map((i) =>
        writer.settle(a.rec(lease.id, 5, i)).then(
          () => 'committed',
          (e: unknown) => (isBusy(e) ? 'busy' : String(e)),
        ),
      );
      const gap = await longestTimerGap(1_800);
      expect(await Promise.all(outcomes)).toEqual(['busy', 'busy', 'busy']);
      expect(gap).toBeLessThan(1_000);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(await h.db.selectFrom(usageWithIds(h.db)).select('id').execute()).toEqual([]);
    expect((await a.bal()).credit_cents).toBe(100);
    await expectLedgerConsistent(h);
  });

  it('a lease acquisition refuses at once with SQLITE_BUSY instead of waiting (the pipeline retries it on a timer)', async () => {
    const a = await arrange(100);
    const other = holdWriteLock();
    const t0 = Date.now();
    expect(isBusy(reserveError(a))).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1_000); // not the connection's 5 s busy timeout
    other.exec('COMMIT');
    expect(a.leases.reserve(a.key, utcDay(a.now), 5, a.now).ok).toBe(true);
    // The connection's own busy timeout is back for everything else.
    expect(h.sqlite.pragma('busy_timeout', { simple: true })).toBe(5000);
    other.close();
  });

  it("a neverWait connection (the gateway worker's) refuses at once without toggling its timeout; only waitingForLock waits", async () => {
    const a = await arrange(100);
    neverWait(h.sqlite);
    expect(h.sqlite.pragma('busy_timeout', { simple: true })).toBe(0);
    const other = holdWriteLock();
    const t0 = Date.now();
    const settled = a.writer.settle(a.rec(null, 5, 1));
    await new Promise((r) => setTimeout(r, 20));
    expect(a.writer.pending).toBe(1); // still queued, retried on a timer
    expect(isBusy(reserveError(a))).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1000);
    other.exec('COMMIT');
    expect(await settled).toBe(95);
    expect(h.sqlite.pragma('busy_timeout', { simple: true })).toBe(0);
    expect(waitingForLock(h.sqlite, 1234, () => h.sqlite.pragma('busy_timeout', { simple: true }))).toBe(1234);
    expect(h.sqlite.pragma('busy_timeout', { simple: true })).toBe(0);
    other.close();
  });
});

describe('LeaseManager', () => {
  it('never leases beyond the org credit, the key budget or the daily cap, and names the limit', async () => {
    const day = utcDay(Date.now());
    const credit = await arrange(12);
    expect(credit.leases.reserve(credit.key, day, 5, credit.now).ok).toBe(true);
    expect(credit.leases.reserve(credit.key, day, 5, credit.now).ok).toBe(true);
    expect(credit.leases.reserve(credit.key, day, 5, credit.now)).toMatchObject({
      ok: false,
      code: 'insufficient_credits',
      headroom: 2,
    });
    expect((await credit.bal()).reserved_cents).toBeLessThanOrEqual(12);

    const budget = await arrange(1000, { budgetCents: 7 });
    expect(budget.leases.reserve(budget.key, day, 5, budget.now).ok).toBe(true);
    expect(budget.leases.reserve(budget.key, day, 5, budget.now)).toMatchObject({ ok: false, code: 'budget_exceeded' });

    const daily = await arrange(1000, { dailyCapCents: 9 });
    expect(daily.leases.reserve(daily.key, day, 5, daily.now).ok).toBe(true);
    expect(daily.leases.reserve(daily.key, day, 5, daily.now)).toMatchObject({ ok: false, code: 'daily_cap_exceeded' });
    expect(daily.leases.reserve(daily.key, day + 1, 5, daily.now).ok).toBe(true);
  });

  it("shrinks to what is in flight under pressure, and a reaper returns a dead holder's unspent slice", async () => {
    const a = await arrange(400);
    const day = utcDay(a.now);
    const r = a.leases.reserve(a.key, day, 5, a.now);
    expect(r.ok).toBe(true);
    expect((await a.bal()).reserved_cents).toBe(20); // max chunk
    a.leases.shrinkWhere(() => true, a.now);
    expect((await a.bal()).reserved_cents).toBe(5); // only the call in flight stays reserved
    // Another holder sees this one as dead (stale heartbeat) and returns the rest.
    const other = new Instances(h.sqlite, a.now);
    expect(other.reapDead(a.now + 60_000, 5_000)).toBe(5);
    expect((await a.bal()).reserved_cents).toBe(0);
    const open = await h.db.selectFrom('balance_leases').select('id').where('released_at', 'is', null).execute();
    expect(open).toHaveLength(0);
  });

  it('reaps by pid only on its own host: a remote holder with a fresh heartbeat keeps its slice, whatever its pid', async () => {
    const a = await arrange(400);
    const day = utcDay(a.now);
    expect(a.leases.reserve(a.key, day, 5, a.now).ok).toBe(true);
    expect((await a.bal()).reserved_cents).toBe(20);
    // A pid that does not exist here (above pid_max). On another host that proves nothing.
    const gonePid = 4_194_305;
    await h.db
      .updateTable('gateway_instances')
      .set({ pid: gonePid, host: 'other-host/boot' })
      .where('id', '=', a.inst.id)
      .execute();
    const here = new Instances(h.sqlite, a.now);
    expect(here.reapDead(a.now + 1_000, 5_000)).toBe(0);
    expect((await a.bal()).reserved_cents).toBe(20);
    // Same holder claimed by this host: now the missing pid means it is dead, and its unspent slice returns.
    await h.db.updateTable('gateway_instances').set({ host: here.host }).where('id', '=', a.inst.id).execute();
    // All 20 come back: the 5 in flight were only reserved in the dead process's memory, never charged.
    expect(here.reapDead(a.now + 1_000, 5_000)).toBe(20);
    expect((await a.bal()).reserved_cents).toBe(0);
    // A remote holder still dies by staleness.
    const remote = new Instances(h.sqlite, a.now, 'other-host/boot');
    expect(here.reapDead(a.now + 1_000, 5_000)).toBe(0);
    expect(here.reapDead(a.now + 60_000, 5_000)).toBe(0);
    const row = await h.db
      .selectFrom('gateway_instances')
      .select('stopped_at')
      .where('id', '=', remote.id)
      .executeTakeFirstOrThrow();
    expect(row.stopped_at).not.toBeNull();
  });

  it('a holder that is stopped (shut down, or reaped while stalled) takes no new slice: nothing could ever return it', async () => {
    const a = await arrange(400);
    // Shutdown released everything and marked the holder stopped; a call on a still-open keep-alive connection
    // arrives before the process exits. A stopped holder is never reaped, so a slice taken now would stay reserved.
    a.leases.releaseAll(a.now);
    a.inst.markStopped(a.now);
    expect(() => a.leases.reserve(a.key, utcDay(a.now), 5, a.now)).toThrow(HolderReapedError);
    expect((await a.bal()).reserved_cents).toBe(0);
    new Instances(h.sqlite, a.now).reapDead(a.now + 60_000, 5_000);
    expect((await a.bal()).reserved_cents).toBe(0);
    expect(await h.db.selectFrom('balance_leases').select('id').where('released_at', 'is', null).execute()).toEqual([]);
  });
});
