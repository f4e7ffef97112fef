/**
 * The settle writer's usage INSERT runs in multi-row chunks (USAGE_CHUNKS rows per statement). These tests pin that
 * the chunking is invisible: every batch size writes exactly its calls' rows with every field, the same money as
 * one call at a time, and a duplicate request id still fails as one call, never its chunk's neighbours.
 */
import { describe, expect, it } from 'vitest';
import { useMigratedTempDb, seedOrg, seedKey, expectLedgerConsistent, usageWithIds } from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';
import { SettleWriter, USAGE_CHUNKS, type SettleRecord } from '../../../gateway/settle-writer.js';
import { splitPlatformFee } from '../../../core/platform-fee.js';
import { seedCallParties } from './pipeline-kit.js';

let h: DbHandles;
useMigratedTempDb((d) => ({ h } = d));

const FEE_BPS = 2000;
const CREDIT = 1_000_000;

async function arrange() {
  const parties = await seedCallParties(h, { credit: CREDIT, priceCents: 7 });
  const writer = new SettleWriter(h.sqlite, { holderId: null, platformFeeBps: FEE_BPS });
  const now = Date.now();
  /** Call i of a batch: fields vary per call so a row written from the wrong call's values shows. */
  const call = (tag: string, i: number): SettleRecord => ({
    ...parties.record(now + i, `req_${tag}_${String(i).padStart(4, '0')}`, null, [0, 3, 7, 1][i % 4]!),
    method: i % 3 === 0 ? 'POST' : 'GET',
    status: i % 5 === 0 ? 502 : 200,
    latencyMs: i * 3 + 1,
    priceCents: 7 + (i % 2),
    errorCode: i % 5 === 0 ? 'upstream_error' : null,
  });
  const credit = () =>
    h.sqlite.prepare('SELECT credit_cents FROM balances WHERE org_id = ?').pluck().get(parties.consumer.orgId);
  return { ...parties, writer, call, credit };
}

function rowOf(r: SettleRecord) {
  return {
    id: r.requestId,
    org_id: r.orgId,
    key_id: r.keyId,
    api_id: r.apiId,
    endpoint_id: r.endpointId,
    provider_org_id: r.providerOrgId,
    method: r.method,
    status: r.status,
    latency_ms: r.latencyMs,
    price_cents: r.priceCents,
    charged_cents: r.chargedCents,
    error_code: r.errorCode,
    created_at: r.createdAt,
  };
}

describe('SettleWriter multi-row usage INSERT', () => {
  it('uses chunks of 128, 64, 16, 4 and 1 rows', () => {
    expect([...USAGE_CHUNKS]).toEqual([128, 64, 16, 4, 1]);
  });

  for (const n of [1, 3, 63, 64, 65, 127, 128, 129, 200, 300]) {
    it(`a batch of ${n} writes exactly its ${n} rows, each with its own fields, and the same money as one by one`, async () => {
      const a = await arrange();
      const recs = Array.from({ length: n }, (_, i) => a.call('b', i));
      const balances = await Promise.all(recs.map((r) => a.writer.settle(r)));
      expect(a.writer.batches).toBe(1);
      expect(a.writer.written).toBe(n);

      const rows = await h.db.selectFrom(usageWithIds(h.db)).selectAll().orderBy('id').execute();
      expect(rows).toEqual(recs.map(rowOf));

      const charged = recs.reduce((s, r) => s + r.chargedCents, 0);
      // Each caller learns the credit right after its own call, in order.
      let left = CREDIT;
      expect(balances).toEqual(recs.map((r) => (left -= r.chargedCents)));
      expect(a.credit()).toBe(CREDIT - charged);
      const entries = await h.db
        .selectFrom('ledger_entries')
        .select(['amount_cents', 'reason'])
        .where('kind', '=', 'call_charge')
        .execute();
      const paid = recs.filter((r) => r.chargedCents > 0).length;
      expect(entries).toEqual(
        paid === 0 ? [] : [{ amount_cents: -charged, reason: `${paid} call${paid === 1 ? '' : 's'}` }],
      );
      // The fee is still floored per call, not on the batch's sum.
      const fee = recs.reduce((s, r) => s + splitPlatformFee(r.chargedCents, FEE_BPS).feeCents, 0);
      const earn = await h.db
        .selectFrom('provider_earnings')
        .select(['gross_cents', 'fee_cents', 'net_cents'])
        .execute();
      expect(earn).toEqual(paid === 0 ? [] : [{ gross_cents: charged, fee_cents: fee, net_cents: charged - fee }]);
      await expectLedgerConsistent(h);
    });
  }

  it('a duplicate request id inside a 128-row chunk fails that one call; its neighbours commit with their money', async () => {
    const a = await arrange();
    // Already recorded: a second settle of req_d_0005 must be refused by the request-id key.
    await a.writer.settle(a.call('d', 5));
    const before = a.credit() as number;
    // 140 calls: one 128-row chunk and three 4-row ones.
    const recs = Array.from({ length: 140 }, (_, i) => a.call('d', i + 100));
    recs[10] = a.call('d', 5); // in the 128-row chunk
    recs[133] = { ...recs[131]! }; // the same id twice in one batch, in two different 4-row chunks
    const results = await Promise.allSettled(recs.map((r) => a.writer.settle(r)));
    const rejected = results.flatMap((r, i) => (r.status === 'rejected' ? [i] : []));
    expect(rejected).toEqual([10, 133]);
    const written = recs.filter((_, i) => i !== 10 && i !== 133);
    const rows = await h.db
      .selectFrom(usageWithIds(h.db))
      .selectAll()
      .where('id', '!=', 'req_d_0005')
      .orderBy('id')
      .execute();
    expect(rows).toEqual(written.map(rowOf));
    expect(a.credit()).toBe(before - written.reduce((s, r) => s + r.chargedCents, 0));
    await expectLedgerConsistent(h);
  });

  it('names each org, key, API, endpoint and provider of a mixed batch by its own num', async () => {
    const a = await arrange();
    const other = await seedOrg(h);
    const recs = Array.from({ length: 67 }, (_, i) =>
      i % 2 === 1
        ? { ...a.call('m', i), chargedCents: 0, providerOrgId: other.orgId, apiId: `api_x${i}` }
        : a.call('m', i),
    );
    await Promise.all(recs.map((r) => a.writer.settle(r)));
    const rows = await h.db.selectFrom(usageWithIds(h.db)).selectAll().orderBy('id').execute();
    expect(rows).toEqual(recs.map(rowOf));
  });
  it('sums interleaved keys, days, providers and prices per key, per day and per (provider, API), fee floored per call', async () => {
    const a = await arrange();
    const key2 = await seedKey(h, a.consumer.orgId);
    const other = await seedOrg(h);
    // Runs of equal calls broken by another key, another day, another provider and uncharged calls.
    const shapes: [key: string, day: number, provider: string, cents: number][] = [
      [a.key.keyId, 100, a.provider.orgId, 3],
      [a.key.keyId, 100, a.provider.orgId, 7],
      [a.key.keyId, 100, a.provider.orgId, 7],
      [key2.keyId, 100, a.provider.orgId, 4],
      [a.key.keyId, 100, a.provider.orgId, 0],
      [a.key.keyId, 101, a.provider.orgId, 7],
      [a.key.keyId, 101, other.orgId, 9],
      [key2.keyId, 100, other.orgId, 0],
      [a.key.keyId, 100, a.provider.orgId, 4],
      [key2.keyId, 101, a.provider.orgId, 6],
    ];
    const recs = shapes.map(([keyId, day, providerOrgId, cents], i) => ({
      ...a.call('s', i),
      keyId,
      day,
      providerOrgId,
      chargedCents: cents,
    }));
    const before = a.credit() as number;
    await Promise.all(recs.map((r) => a.writer.settle(r)));
    expect(a.writer.batches).toBe(1);
    const sum = (f: (r: SettleRecord) => boolean, v: (r: SettleRecord) => number = (r) => r.chargedCents) =>
      recs.filter(f).reduce((t, r) => t + v(r), 0);
    const fee = (r: SettleRecord) => splitPlatformFee(r.chargedCents, FEE_BPS).feeCents;
    const paid = (r: SettleRecord) => r.chargedCents > 0;

    const entries = await h.db
      .selectFrom('ledger_entries')
      .select(['key_id', 'amount_cents', 'reason'])
      .where('kind', '=', 'call_charge')
      .execute();
    expect(entries.sort((x, y) => String(x.key_id).localeCompare(String(y.key_id)))).toEqual(
      [a.key.keyId, key2.keyId]
        .map((k) => ({
          key_id: k,
          amount_cents: -sum((r) => r.keyId === k),
          reason: `${recs.filter((r) => r.keyId === k && paid(r)).length} calls`,
        }))
        .sort((x, y) => x.key_id.localeCompare(y.key_id)),
    );
    const earn = await h.db
      .selectFrom('provider_earnings')
      .select(['provider_org_id', 'gross_cents', 'fee_cents'])
      .execute();
    expect(earn.sort((x, y) => x.provider_org_id.localeCompare(y.provider_org_id))).toEqual(
      [a.provider.orgId, other.orgId]
        .map((p) => ({
          provider_org_id: p,
          gross_cents: sum((r) => r.providerOrgId === p),
          fee_cents: sum((r) => r.providerOrgId === p, fee),
        }))
        .sort((x, y) => x.provider_org_id.localeCompare(y.provider_org_id)),
    );
    // 20 % floored per call: 3 → 0, 7 → 1, 4 → 0, 9 → 1, 6 → 1; a fee on the sums would differ.
    expect(sum(() => true, fee)).toBe(5);
    const days = await h.db.selectFrom('key_daily_spend').select(['key_id', 'day', 'spent_cents']).execute();
    const expectDays = [a.key.keyId, key2.keyId].flatMap((k) =>
      [100, 101].map((d) => ({ key_id: k, day: d, spent_cents: sum((r) => r.keyId === k && r.day === d) })),
    );
    const order = (x: { key_id: string; day: number }, y: { key_id: string; day: number }) =>
      x.key_id.localeCompare(y.key_id) || x.day - y.day;
    expect(days.sort(order)).toEqual(expectDays.filter((d) => d.spent_cents > 0).sort(order));
    for (const k of [a.key.keyId, key2.keyId]) {
      const spent = h.sqlite.prepare('SELECT spent_cents FROM api_keys WHERE id = ?').pluck().get(k);
      expect(spent).toBe(sum((r) => r.keyId === k));
    }
    expect(a.credit()).toBe(before - sum(() => true));
    await expectLedgerConsistent(h);
  });
});
