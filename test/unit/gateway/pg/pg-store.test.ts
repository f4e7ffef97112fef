/**
 * The gateway's PostgreSQL store against a real PostgreSQL 15: leases, the group commit with its fold, fencing,
 * the reaper (database clock, host-aware), Idempotency-Key claims across holders, and exactly-N under
 * concurrency across three holders, each on its own connections as three gateway hosts would be.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pg, sql } from '../../../../gateway/pg/connect.js';
import { PgHolders } from '../../../../gateway/pg/holders.js';
import { PgLeaseManager } from '../../../../gateway/pg/leases.js';
import { PgSettleWriter } from '../../../../gateway/pg/settle-writer.js';
import { PgIdempotency } from '../../../../gateway/pg/idempotency.js';
import { HolderReapedError, type SettleRecord } from '../../../../gateway/settle-writer.js';
import type { KeyRecord } from '../../../../gateway/cache/key-cache.js';
import { utcDay } from '../../../../core/clock.js';
import { moneyProblems, pgUnavailable, useGatewayPg, seedParties, type Parties } from './pg-kit.js';

const why = pgUnavailable();
const env = useGatewayPg();
let url: string;
let admin: Pg;
const pools: Pg[] = [];

beforeAll(() => {
  url = env.url();
  admin = env.admin();
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});

/** One gateway "node": its own connections, holder row, leases, writer and claims. */
async function node(opts: { host?: string; maxChunkCents?: number; holders?: () => number } = {}) {
  const db = new Pg(url, { max: 3 });
  pools.push(db);
  const now = Date.now();
  const holder = await PgHolders.register(db, now, opts.host);
  const leases = new PgLeaseManager(db, holder.id, {
    liveHolders: opts.holders ?? (() => 1),
    maxChunkCents: opts.maxChunkCents ?? 20,
    idleMs: 60_000,
  });
  const writer = new PgSettleWriter(db, {
    holderId: holder.id,
    platformFeeBps: 2000,
    onCommitted: (rs) => {
      for (const r of rs) if (r.leaseId && r.chargedCents > 0) leases.committed(r.leaseId, r.chargedCents);
    },
  });
  const idem = new PgIdempotency(db, holder.id, 60_000, (e) => {
    throw e;
  });
  return { db, holder, leases, writer, idem };
}

function keyOf(p: Parties, caps: Partial<KeyRecord> = {}): KeyRecord {
  return {
    keyId: p.keyId,
    keyHash: p.keyHash,
    orgId: p.orgId,
    canCall: true,
    revoked: false,
    freeOnly: false,
    budgetCents: null,
    perCallMaxCents: null,
    dailyCapCents: null,
    rateLimitPerMin: null,
    ...caps,
  };
}

let seq = 0;
function rec(p: Parties, leaseId: string | null, charged: number, extra: Partial<SettleRecord> = {}): SettleRecord {
  const now = Date.now();
  return {
    requestId: `req_${++seq}_${Math.random().toString(36).slice(2)}`,
    orgId: p.orgId,
    keyId: p.keyId,
    apiId: 'api_1',
    endpointId: 'ep_1',
    providerOrgId: p.providerOrgId,
    method: 'GET',
    status: 200,
    latencyMs: 3,
    priceCents: charged,
    chargedCents: charged,
    errorCode: null,
    createdAt: now,
    leaseId,
    day: utcDay(now),
    ...extra,
  };
}

type Node = Awaited<ReturnType<typeof node>>;

/** A paid call as the pipeline makes it: reserve (asking the others for their slices when refused), settle. */
async function paidCall(n: Node, others: Node[], p: Parties, price: number): Promise<'ok' | 'refused'> {
  const key = keyOf(p);
  const day = utcDay(Date.now());
  for (let attempt = 0; attempt < 20; attempt++) {
    const r = await n.leases.reserve(key, day, price, Date.now());
    if (r.ok) {
      await n.writer.settle(rec(p, r.lease.id, price));
      return 'ok';
    }
    if (!r.othersHold) return 'refused';
    // The pressure broadcast: every other holder hands back what its calls in flight do not need.
    await Promise.all(others.map((o) => o.leases.shrinkWhere((l) => l.orgId === p.orgId, Date.now())));
  }
  return 'refused';
}

async function bal(p: Parties) {
  const [b] = (await admin.rows(sql`SELECT credit_cents, reserved_cents FROM balances WHERE org_id = ${p.orgId}`)) as {
    credit_cents: number;
    reserved_cents: number;
  }[];
  return b!;
}

describe.skipIf(why)(`gateway PostgreSQL store${why ? ` (skipped: ${why})` : ''}`, () => {
  it('leases, settles and folds: credit = ledger + unfolded while slices are open, = ledger once released', async () => {
    const p = await seedParties(admin, 400);
    const a = await node();
    const key = keyOf(p);
    const day = utcDay(Date.now());
    const r1 = await a.leases.reserve(key, day, 5, Date.now());
    expect(r1.ok).toBe(true);
    expect(await bal(p)).toEqual({ credit_cents: 400, reserved_cents: 20 }); // min(cap 20, 400/4)
    if (!r1.ok) return;
    // The second call is served from memory: no promise, no round trip.
    const r2 = a.leases.reserve(key, day, 5, Date.now());
    expect(r2).not.toBeInstanceOf(Promise);
    const credits = await Promise.all([
      a.writer.settle(rec(p, r1.lease.id, 5)),
      a.writer.settle(rec(p, r1.lease.id, 5)),
    ]);
    expect(a.writer.batches).toBe(1); // one group commit for both
    expect(credits).toEqual([395, 390]);
    // The batch touched no shared row: balances unchanged, the lease carries the unfolded spend.
    expect(await bal(p)).toEqual({ credit_cents: 400, reserved_cents: 20 });
    expect(await moneyProblems(admin)).toEqual([]);
    expect(await a.leases.foldOpen(Date.now())).toBe(10);
    expect(await bal(p)).toEqual({ credit_cents: 390, reserved_cents: 10 });
    const [k] = await admin.rows(sql`SELECT spent_cents FROM api_keys WHERE id = ${p.keyId}`);
    expect(k!.spent_cents).toBe(10);
    await a.writer.settle(rec(p, r1.lease.id, 0, { status: 502, errorCode: 'upstream_error' })); // free row
    await a.leases.releaseAll(Date.now());
    expect(await bal(p)).toEqual({ credit_cents: 390, reserved_cents: 0 });
    expect(await moneyProblems(admin)).toEqual([]);
  });

  it('budget and daily caps hold across holders: open slices of every holder count against the key', async () => {
    const p = await seedParties(admin, 10_000, { budgetCents: 30 });
    const a = await node({ maxChunkCents: 1000 });
    const b = await node({ maxChunkCents: 1000 });
    const key = keyOf(p, { budgetCents: 30 });
    const day = utcDay(Date.now());
    const ra = await a.leases.reserve(key, day, 10, Date.now());
    expect(ra.ok).toBe(true);
    const rb = await b.leases.reserve(key, day, 10, Date.now());
    expect(rb.ok).toBe(true);
    const [o] = await admin.rows(
      sql`SELECT sum(amount_cents)::bigint AS s FROM balance_leases WHERE key_id = ${p.keyId} AND released_at IS NULL`,
    );
    expect(o!.s).toBeLessThanOrEqual(30);
    const rc = await b.leases.reserve(key, day, 25, Date.now());
    expect(rc).toMatchObject({ ok: false, code: 'budget_exceeded' });
  });

  it('fencing: a holder reaped while stalled cannot settle or lease; the reaper returns its slice exactly', async () => {
    const p = await seedParties(admin, 400);
    const a = await node();
    const b = await node();
    const key = keyOf(p);
    const day = utcDay(Date.now());
    const r = await a.leases.reserve(key, day, 5, Date.now());
    if (!r.ok) throw new Error('no lease');
    await a.writer.settle(rec(p, r.lease.id, 5));
    // a stalls: its heartbeat ages past the stale bound on the database's clock.
    await admin.rows(sql`UPDATE gateway_instances SET heartbeat_at = heartbeat_at - 120000 WHERE id = ${a.holder.id}`);
    expect(await b.holder.reapDead(Date.now(), 30_000)).toBe(15); // 20 reserved, 5 spent
    expect(await bal(p)).toEqual({ credit_cents: 395, reserved_cents: 0 }); // its spend folded at the reap
    await expect(a.writer.settle(rec(p, r.lease.id, 5))).rejects.toBeInstanceOf(HolderReapedError);
    await expect(a.leases.reserve(key, day, 100, Date.now())).rejects.toBeInstanceOf(HolderReapedError);
    expect(await a.holder.heartbeat()).toBe(false);
    await expect(a.idem.claim(p.orgId, 'k1', 'h', 'req_x', () => Date.now())).rejects.toBeInstanceOf(HolderReapedError);
    expect(await moneyProblems(admin)).toEqual([]);
  });

  it('the reaper tests a pid only on its own host, and staleness by the database clock', async () => {
    const p = await seedParties(admin, 400);
    const remote = await node({ host: 'other-host/boot' });
    const here = await node();
    const r = await remote.leases.reserve(keyOf(p), utcDay(Date.now()), 5, Date.now());
    expect(r.ok).toBe(true);
    await admin.rows(sql`UPDATE gateway_instances SET pid = 4194305 WHERE id = ${remote.holder.id}`); // no such pid here
    // A host clock far ahead changes nothing: staleness is judged on the database's clock.
    expect(await here.holder.reapDead(Date.now() + 3_600_000, 30_000)).toBe(0);
    expect((await bal(p)).reserved_cents).toBe(20);
    await admin.rows(sql`UPDATE gateway_instances SET host = ${here.holder.host} WHERE id = ${remote.holder.id}`);
    expect(await here.holder.reapDead(Date.now(), 30_000)).toBe(20);
    expect((await bal(p)).reserved_cents).toBe(0);
  });

  it('Idempotency-Key: of concurrent claims on three holders exactly one wins; a completed one replays, a different request conflicts', async () => {
    const p = await seedParties(admin, 400);
    const nodes = [await node(), await node(), await node()];
    const outs = await Promise.all(
      nodes.flatMap((n, i) =>
        [0, 1, 2].map((j) => n.idem.claim(p.orgId, 'idem-1', 'hash-1', `req_${i}_${j}`, () => Date.now())),
      ),
    );
    expect(outs.filter((o) => o.kind === 'new')).toHaveLength(1);
    expect(outs.filter((o) => o.kind === 'in_flight')).toHaveLength(8);
    const [row] = await admin.rows(
      sql`SELECT request_id, holder_id FROM idempotency_records WHERE org_id = ${p.orgId} AND idem_key = 'idem-1'`,
    );
    const winner = nodes.find((n) => n.holder.id === row!.holder_id)!;
    const lease = await winner.leases.reserve(keyOf(p), utcDay(Date.now()), 5, Date.now());
    if (!lease.ok) throw new Error('no lease');
    const done = rec(p, lease.lease.id, 5, { requestId: row!.request_id as string });
    done.idempotency = {
      orgId: p.orgId,
      idemKey: 'idem-1',
      status: 200,
      headersJson: '[]',
      body: Buffer.from('first'),
    };
    await winner.writer.settle(done);
    const again = await nodes[2]!.idem.claim(p.orgId, 'idem-1', 'hash-1', 'req_retry', () => Date.now());
    expect(again).toMatchObject({ kind: 'replay', requestId: row!.request_id, status: 200 });
    if (again.kind === 'replay') expect(again.body.toString()).toBe('first');
    expect((await nodes[1]!.idem.claim(p.orgId, 'idem-1', 'hash-2', 'req_other', () => Date.now())).kind).toBe(
      'conflict',
    );
    // Expired (24 h on the database clock; the dev clock's offset moves it): a new charge may run.
    const later = () => Date.now() + 120_000;
    expect((await nodes[1]!.idem.claim(p.orgId, 'idem-1', 'hash-1', 'req_new', later)).kind).toBe('new');
  });

  it('1,000 concurrent paid calls over three holders against 400 cents: exactly 400 succeed, books exact', async () => {
    const p = await seedParties(admin, 400);
    const holders = () => 3;
    const nodes = [await node({ holders }), await node({ holders }), await node({ holders })];
    const calls = Array.from({ length: 1000 }, (_, i) => {
      const n = nodes[i % 3]!;
      return paidCall(
        n,
        nodes.filter((o) => o !== n),
        p,
        1,
      );
    });
    const outs = await Promise.all(calls);
    expect(outs.filter((o) => o === 'ok')).toHaveLength(400);
    expect(await moneyProblems(admin)).toEqual([]);
    for (const n of nodes) await n.leases.releaseAll(Date.now());
    expect(await bal(p)).toEqual({ credit_cents: 0, reserved_cents: 0 });
    const [u] = await admin.rows(
      sql`SELECT count(*) AS n, sum(charged_cents)::bigint AS c FROM usage_events WHERE org_id = ${p.orgId}`,
    );
    expect(u).toEqual({ n: 400, c: 400 });
    expect(await moneyProblems(admin)).toEqual([]);
  }, 60_000);
});
