import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedKey, seedOrg } from '../../helpers/db.js';
import { newOpenPayment } from '../../../control/billing/billing.repo.js';

let h: ControlHarness;
beforeAll(async () => {
  h = await startControl();
});
afterAll(() => h.stop());

describe('every list pages (limit, offset, has_more)', () => {
  it('GET /v1/keys?limit=1 returns one key and has_more; offset walks the rest', async () => {
    const db = openTestDb(h.dataDir);
    const org = await seedOrg(db);
    await seedKey(db, org.orgId);
    await seedKey(db, org.orgId);
    await db.close();
    const first = await call(h.control.url, 'GET', '/v1/keys?limit=1', { token: org.session });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ limit: 1, offset: 0, has_more: true });
    expect(first.body.data).toHaveLength(1);
    const rest = await call(h.control.url, 'GET', '/v1/keys?limit=10&offset=1', { token: org.session });
    expect(rest.body.data).toHaveLength(2);
    expect(rest.body.has_more).toBe(false);
    expect(rest.body.data.map((k: { id: string }) => k.id)).not.toContain(first.body.data[0].id);
  });

  it('GET /v1/billing/payments pages the same way', async () => {
    const db = openTestDb(h.dataDir);
    const org = await seedOrg(db);
    const now = Date.now();
    for (let i = 0; i < 3; i++)
      await db.db
        .insertInto('payments')
        .values(newOpenPayment({ orgId: org.orgId, kind: 'checkout', processor: 'test' }, now + i))
        .execute();
    await db.close();
    const page = await call(h.control.url, 'GET', '/v1/billing/payments?limit=2', { token: org.session });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ limit: 2, offset: 0, has_more: true });
    expect(page.body.data).toHaveLength(2);
    const last = await call(h.control.url, 'GET', '/v1/billing/payments?limit=2&offset=2', { token: org.session });
    expect(last.body.data).toHaveLength(1);
    expect(last.body.has_more).toBe(false);
  });
});

describe('date bounds', () => {
  it('provider analytics accepts the plain dates /v1/usage accepts', async () => {
    const db = openTestDb(h.dataDir);
    const org = await seedOrg(db);
    await db.close();
    const usage = await call(h.control.url, 'GET', '/v1/usage?from=2026-01-01&to=2026-02-01', { token: org.key });
    expect(usage.status).toBe(200);
    const res = await call(h.control.url, 'GET', '/v1/provider/analytics?from=2026-01-01&to=2026-02-01', {
      token: org.key,
    });
    expect(res.status).toBe(200);
  });
});
