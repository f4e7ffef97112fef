import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { chargeLikeGateway, seedOrg } from '../../helpers/db.js';
import { useStripeControl, type FakeStripe } from '../../helpers/fake-stripe.js';
import { runAdmin } from './admin-cli.js';
import type { DbHandles } from '../../../core/db/database.js';
import { postEntry } from '../../../control/ledger/ledger.service.js';
import { insertUsageCalls } from '../../../core/db/id-nums.js';

let fake: FakeStripe;
let h: ControlHarness;
let db: DbHandles;

useStripeControl((s) => ({ fake, h, db } = s));

/** mulberry32: a seeded PRNG so a failing sequence can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('ledger consistency', () => {
  it('keeps balance = sum of entries = the expected total after a random mix of purchases, calls, refunds and redeliveries', async () => {
    const seed = Number(process.env.SVC_TEST_SEED ?? Date.now() % 100_000);
    const rand = rng(seed);
    const org = await seedOrg(db);
    let expected = 0;
    const charges: { req: string; cents: number }[] = [];
    const delivered: { payload: string; signature: string }[] = [];

    for (let i = 0; i < 40; i++) {
      const op = rand();
      if (op < 0.25) {
        const amount = 500 + Math.floor(rand() * 20) * 50;
        const co = await call(h.control.url, 'POST', '/v1/billing/checkout', {
          token: org.key,
          body: { amount_cents: amount },
        });
        expect(co.status, `seed ${seed}`).toBe(201);
        const ref = (
          await db.db
            .selectFrom('payments')
            .select('processor_ref')
            .where('id', '=', co.body.payment_id)
            .executeTakeFirstOrThrow()
        ).processor_ref!;
        const ev = fake.signedEvent('checkout.session.completed', {
          id: ref,
          object: 'checkout.session',
          mode: 'payment',
          payment_status: 'paid',
          metadata: { payment_id: co.body.payment_id },
        });
        await fake.deliver(h.control.url, ev);
        delivered.push(ev);
        expected += amount;
      } else if (op < 0.35 && delivered.length) {
        await fake.deliver(h.control.url, delivered[Math.floor(rand() * delivered.length)]!); // redelivery: no effect
      } else if (op < 0.8) {
        const cents = 1 + Math.floor(rand() * 400);
        try {
          const req = await chargeLikeGateway(db, org, cents);
          charges.push({ req, cents });
          expected -= cents;
        } catch (e) {
          expect(String(e), `seed ${seed}`).toMatch(/insufficient unreserved credit/);
          expect(cents, `seed ${seed}`).toBeGreaterThan(expected);
        }
      } else if (charges.length) {
        const c = charges[Math.floor(rand() * charges.length)]!;
        const r = await db.db.transaction().execute((trx) =>
          postEntry(
            trx,
            {
              orgId: org.orgId,
              kind: 'refund',
              amountCents: c.cents,
              reason: 'upstream failed',
              refType: 'request',
              refId: c.req,
              idempotencyKey: `refund:${c.req}`,
            },
            Date.now(),
          ),
        );
        if (r.applied) expected += c.cents; // a second refund of the same call is a no-op
      }
    }

    const bal = await call(h.control.url, 'GET', '/v1/billing/balance', { token: org.key });
    const sum = await db.db
      .selectFrom('ledger_entries')
      .select((eb) => eb.fn.sum<number>('amount_cents').as('s'))
      .where('org_id', '=', org.orgId)
      .where('status', '=', 'settled')
      .executeTakeFirstOrThrow();
    expect(bal.body.credit_cents, `seed ${seed}`).toBe(expected);
    expect(Number(sum.s ?? 0), `seed ${seed}`).toBe(expected);
    const check = await runAdmin(h.env, ['ledger', 'check', '--json']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.json).toMatchObject({ ok: true, data: { ledger_mismatches: [] } });
  });

  it('makes `svc-admin ledger check` fail and name the org when a balance drifts from its entries', async () => {
    const org = await seedOrg(db);
    await sql`UPDATE balances SET credit_cents = credit_cents + 7 WHERE org_id = ${org.orgId}`.execute(db.db);
    const check = await runAdmin(h.env, ['ledger', 'check', '--json']);
    expect(check.code).toBe(1);
    expect(check.json.ok).toBe(false);
    expect(check.json.data.ledger_mismatches).toEqual([
      expect.objectContaining({ org_id: org.orgId, credit_cents: 7, settled_sum: 0 }),
    ]);
    await sql`UPDATE balances SET credit_cents = credit_cents - 7 WHERE org_id = ${org.orgId}`.execute(db.db);
  });

  it('makes `svc-admin ledger check` fail and name both sides when a charged call has no matching ledger charge', async () => {
    const org = await seedOrg(db);
    const provider = await seedOrg(db);
    const now = Date.now();
    await insertUsageCalls(db.db, [
      {
        request_id: 'req_unbooked',
        org_id: org.orgId,
        key_id: org.keyId,
        api_id: 'api_x',
        endpoint_id: 'ep_x',
        provider_org_id: provider.orgId,
        method: 'GET',
        status: 200,
        latency_ms: 1,
        price_cents: 4,
        charged_cents: 4,
        error_code: null,
        created_at: now,
      },
    ]);
    const check = await runAdmin(h.env, ['ledger', 'check', '--json']);
    expect(check.code).toBe(1);
    expect(check.json.data.ledger_mismatches).toEqual([]);
    expect(check.json.data.usage_mismatches).toEqual(
      expect.arrayContaining([
        { side: 'consumer', org_id: org.orgId, usage_cents: 4, booked_cents: 0 },
        { side: 'provider', org_id: provider.orgId, usage_cents: 4, booked_cents: 0 },
      ]),
    );
    const text = await runAdmin(h.env, ['ledger', 'check']);
    expect(text.stdout).toContain(`consumer ${org.orgId}: calls charged 4 cents in usage, 0 in the ledger`);
    await db.db.deleteFrom('usage_calls').where('request_id', '=', 'req_unbooked').execute();
  });
});
