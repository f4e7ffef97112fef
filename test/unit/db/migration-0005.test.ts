/**
 * 0005 rebuilds the three per-call tables as WITHOUT ROWID and narrows two unique indexes: existing rows must
 * survive unchanged, the append-only triggers must still hold, and idempotency must still refuse a second
 * purchase or payout under the same key.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { openDatabase, type DbHandles } from '../../../core/db/database.js';
import { migrations } from '../../../core/db/migrations/index.js';
import { seedOrg, withLegacyUsage } from '../../helpers/db.js';

let dir = '';
let h: DbHandles | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function migrator(db: DbHandles['db']): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } });
}

const isWithoutRowid = (sqlite: DbHandles['sqlite'], table: string) =>
  /WITHOUT ROWID\s*$/i.test(
    sqlite.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) as string,
  );

describe('migration 0005_lean_call_rows', () => {
  it('keeps every row, the append-only rule and idempotency, with one b-tree per table', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-mig-'));
    h = openDatabase(join(dir, 'svc.db'));
    expect((await migrator(h.db).migrateTo('0004_drop_unused_key_indexes')).error).toBeUndefined();
    const consumer = await seedOrg(h);
    const provider = await seedOrg(h);
    const now = Date.now();
    const usage = {
      id: 'req_0001',
      org_id: consumer.orgId,
      key_id: consumer.keyId,
      api_id: 'api_1',
      endpoint_id: 'ep_1',
      provider_org_id: provider.orgId,
      method: 'GET',
      status: 200,
      latency_ms: 3,
      price_cents: 5,
      charged_cents: 5,
      error_code: null,
      created_at: now,
    };
    const ledger = [
      {
        id: 'txn_0001',
        org_id: consumer.orgId,
        key_id: null,
        kind: 'purchase' as const,
        status: 'settled' as const,
        amount_cents: 500,
        reason: null,
        ref_type: 'payment',
        ref_id: 'pay_1',
        idempotency_key: 'purchase:pay_1',
        created_at: now,
      },
      {
        id: 'txn_0002',
        org_id: consumer.orgId,
        key_id: consumer.keyId,
        kind: 'call_charge' as const,
        status: 'settled' as const,
        amount_cents: -5,
        reason: null,
        ref_type: 'usage',
        ref_id: 'req_0001',
        idempotency_key: 'call:req_0001',
        created_at: now,
      },
    ];
    const earning = {
      id: 'prv_0001',
      provider_org_id: provider.orgId,
      api_id: 'api_1',
      kind: 'earning' as const,
      gross_cents: 5,
      fee_cents: 1,
      net_cents: 4,
      ref_id: 'req_0001',
      idempotency_key: 'earn:req_0001',
      created_at: now,
    };
    await withLegacyUsage(h.db).insertInto('usage_events').values(usage).execute();
    await h.db.insertInto('ledger_entries').values(ledger).execute();
    await h.db.insertInto('provider_earnings').values(earning).execute();

    expect((await migrator(h.db).migrateTo('0005_lean_call_rows')).error).toBeUndefined();

    expect(await withLegacyUsage(h.db).selectFrom('usage_events').selectAll().execute()).toEqual([usage]);
    expect(await h.db.selectFrom('ledger_entries').selectAll().orderBy('id').execute()).toEqual(ledger);
    expect(await h.db.selectFrom('provider_earnings').selectAll().execute()).toEqual([earning]);
    for (const t of ['usage_events', 'ledger_entries', 'provider_earnings'])
      expect(isWithoutRowid(h.sqlite, t)).toBe(true);
    const indexes = h.sqlite
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'usage_events' AND sql IS NOT NULL")
      .pluck()
      .all();
    expect(indexes.sort()).toEqual(['usage_api', 'usage_org']);

    // Append-only still enforced.
    await expect(
      h.db.updateTable('ledger_entries').set({ amount_cents: 1 }).where('id', '=', 'txn_0001').execute(),
    ).rejects.toThrow(/append-only/);
    await expect(h.db.deleteFrom('provider_earnings').where('id', '=', 'prv_0001').execute()).rejects.toThrow(
      /append-only/,
    );
    // A second purchase or payout under the same key is still refused.
    await expect(
      h.db
        .insertInto('ledger_entries')
        .values({ ...ledger[0]!, id: 'txn_0003' })
        .execute(),
    ).rejects.toThrow(/UNIQUE/);
    const payout = {
      ...earning,
      id: 'prv_0002',
      kind: 'payout' as const,
      gross_cents: 0,
      fee_cents: 0,
      net_cents: -4,
      idempotency_key: 'payout:po_1',
    };
    await h.db.insertInto('provider_earnings').values(payout).execute();
    await expect(
      h.db
        .insertInto('provider_earnings')
        .values({ ...payout, id: 'prv_0003' })
        .execute(),
    ).rejects.toThrow(/UNIQUE/);
    // The partial index serves the ledger's idempotency lookup (no table scan per posted entry).
    const plan = h.sqlite
      .prepare("EXPLAIN QUERY PLAN SELECT * FROM ledger_entries WHERE idempotency_key = ? AND kind <> 'call_charge'")
      .all('x') as { detail: string }[];
    expect(plan.map((p) => p.detail).join(' ')).toContain('ledger_idem');

    // And back down again, rows intact.
    expect((await migrator(h.db).migrateTo('0004_drop_unused_key_indexes')).error).toBeUndefined();
    expect(isWithoutRowid(h.sqlite, 'ledger_entries')).toBe(false);
    expect(await h.db.selectFrom('ledger_entries').select('id').orderBy('id').execute()).toEqual([
      { id: 'txn_0001' },
      { id: 'txn_0002' },
    ]);
  });
});
