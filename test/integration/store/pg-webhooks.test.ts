/**
 * Two control-plane replicas (two AppContexts, each with its own pool) on one PostgreSQL database receive the same
 * Stripe event at once, several times: it is applied exactly once (one credit, one processor_events row), the
 * other deliveries answer "duplicate", and the books stay exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../core/config.js';
import { newId } from '../../../core/ids.js';
import { createAppContext, type AppContext } from '../../../control/context.js';
import { applyVerifiedEvent } from '../../../control/billing/webhooks.service.js';
import { expectLedgerConsistent, seedOrg } from '../../helpers/db.js';
import { baseEnv, tempDataDir } from '../../helpers/processes.js';
import { postgresAvailable, usePostgresDatabase } from '../../helpers/postgres.js';

describe.skipIf(!postgresAvailable())('Stripe webhooks across control-plane replicas on PostgreSQL', () => {
  const pgdb = usePostgresDatabase();
  const dirs = [tempDataDir(), tempDataDir()];
  let replicas: AppContext[] = [];

  beforeAll(async () => {
    replicas = [];
    for (const d of dirs)
      replicas.push(
        await createAppContext(loadConfig(baseEnv(d.dir, { SVC_DATABASE_URL: pgdb.get(), SVC_SEARCH_INDEX: '0' })), {
          process: 'test',
        }),
      );
  }, 120_000);
  afterAll(async () => {
    for (const r of replicas) await r.close();
    for (const d of dirs) d.cleanup();
  });

  it('credits a paid checkout once however many replicas receive the event at once', async () => {
    const [a, b] = replicas as [AppContext, AppContext];
    const org = await seedOrg(a);
    const paymentId = newId('pay');
    const now = Date.now();
    await a.db
      .insertInto('payments')
      .values({
        id: paymentId,
        org_id: org.orgId,
        kind: 'checkout',
        processor: 'stripe',
        processor_ref: 'cs_test_once',
        pack_id: null,
        amount_paid_cents: 1_000,
        credit_cents: 1_100,
        status: 'open',
        failure_reason: null,
        trigger_ref: null,
        created_at: now,
        completed_at: null,
      })
      .execute();
    const event = {
      id: 'evt_once_1',
      type: 'checkout.session.completed',
      event: { kind: 'checkout_paid' as const, sessionRef: 'cs_test_once', paymentId },
    };
    const outcomes = await Promise.all(Array.from({ length: 6 }, (_, i) => applyVerifiedEvent(i % 2 ? b : a, event)));
    expect(outcomes.filter((o) => !o.duplicate)).toHaveLength(1);
    expect(outcomes.filter((o) => !o.duplicate)[0]?.outcome).toBe('credited');
    expect(outcomes.filter((o) => o.duplicate)).toHaveLength(5);
    const bal = await b.db.selectFrom('balances').selectAll().where('org_id', '=', org.orgId).executeTakeFirstOrThrow();
    expect(bal.credit_cents).toBe(1_100);
    const events = await b.db.selectFrom('processor_events').selectAll().where('id', '=', 'evt_once_1').execute();
    expect(events).toHaveLength(1);
    await expectLedgerConsistent(a);
  });
});
