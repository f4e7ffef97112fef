/** The provider side's contract with the gateway, over real processes: published listing, secret injection, 428 terms, due price increases. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { call } from '../../helpers/http.js';
import { grantCredits, openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { createLiveListing, startStubUpstream, type LiveListing, type StubUpstream } from '../../helpers/catalog.js';
import type { DbHandles } from '../../../core/db/database.js';

const DAY = 86_400_000;
const SECRET = 'gw-contract-secret';
let h: ControlHarness;
let g: RunningGateway;
let db: DbHandles;
let up: StubUpstream;
let prov: SeededOrg;
let consumer: SeededOrg;
let l: LiveListing;
let clockFile: string;

beforeAll(async () => {
  up = await startStubUpstream({ requireBearer: SECRET });
  clockFile = join(tmpdir(), `svc-gwc-clock-${process.pid}-${Date.now()}`);
  writeFileSync(clockFile, '0');
  h = await startControl({ SVC_CLOCK_OFFSET_FILE: clockFile });
  g = await startGateway(h.dataDir, { SVC_CLOCK_OFFSET_FILE: clockFile });
  db = openTestDb(h.dataDir);
  prov = await seedOrg(db);
  consumer = await seedOrg(db);
  await grantCredits(db, consumer.orgId, 1000);
  l = await createLiveListing(h.control.url, prov.key, {
    baseUrl: up.url,
    name: 'Contract API',
    secret: SECRET,
    verify: true,
    prices: { 'GET /ping': 4 },
  });
});
afterAll(async () => {
  await g?.stop();
  await db?.close();
  await h?.stop();
  await up?.close();
});

const ping = () => call(g.url, 'GET', `/${l.slug}/ping`, { token: consumer.key });
/** The gateway learns control-plane writes through its change feed, a moment later: poll until it answers `status`. */
async function pingUntil(status: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await ping();
    if (r.status === status || Date.now() > deadline) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}
const balance = async () =>
  (
    await db.db
      .selectFrom('balances')
      .select('credit_cents')
      .where('org_id', '=', consumer.orgId)
      .executeTakeFirstOrThrow()
  ).credit_cents;

describe('gateway contract', () => {
  it('a listing published through the provider routes is callable, with the stored secret injected', async () => {
    const before = await balance();
    const r = await ping();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, path: '/ping' });
    expect(up.requests.at(-1)!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(before - (await balance())).toBe(4);
  });

  it('required terms give 428 until an owner session accepts; a new version requires acceptance again', async () => {
    const d1 = await call(h.control.url, 'POST', '/v1/provider/documents', {
      token: prov.key,
      body: {
        kind: 'terms',
        source: 'hosted',
        version: '1.0.0',
        markdown: '# v1',
        api_id: l.apiId,
        acceptance_mode: 'required',
      },
    });
    await call(h.control.url, 'POST', `/v1/provider/documents/${d1.body.document_id}/activate`, { token: prov.key });
    const refused = await pingUntil(428);
    expect(refused.status).toBe(428);
    expect(refused.body.code).toBe('terms_not_accepted');
    await call(h.control.url, 'POST', `/v1/apis/${l.slug}/terms/accept`, { token: consumer.session });
    expect((await pingUntil(200)).status).toBe(200);

    const d2 = await call(h.control.url, 'POST', '/v1/provider/documents', {
      token: prov.key,
      body: {
        kind: 'terms',
        source: 'hosted',
        version: '2.0.0',
        markdown: '# v2',
        api_id: l.apiId,
        acceptance_mode: 'required',
      },
    });
    await call(h.control.url, 'POST', `/v1/provider/documents/${d2.body.document_id}/activate`, { token: prov.key });
    expect((await pingUntil(428)).status).toBe(428);
    await call(h.control.url, 'POST', `/v1/apis/${l.slug}/terms/accept`, { token: consumer.session });
    expect((await pingUntil(200)).status).toBe(200);
  });

  it('an increase is charged only once it comes due; unpublishing stops calls', async () => {
    const ep = l.endpoints['GET /ping']!;
    const s = await call(h.control.url, 'PUT', `/v1/provider/apis/${l.apiId}/pricing`, {
      token: prov.key,
      body: { endpoints: [{ endpoint_id: ep, price_cents: 9 }] },
    });
    expect(s.body.results[0].outcome).toBe('scheduled');
    let before = await balance();
    expect((await ping()).status).toBe(200);
    expect(before - (await balance())).toBe(4);

    writeFileSync(clockFile, String(8 * DAY));
    const deadline = Date.now() + 10_000;
    while (
      (await db.db.selectFrom('endpoints').select('price_cents').where('id', '=', ep).executeTakeFirstOrThrow())
        .price_cents !== 9 &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 200));
    }
    // the gateway picks the new price up from the change feed: keep calling until a call costs 9
    let charged = 0;
    for (let i = 0; i < 50 && charged !== 9; i++) {
      before = await balance();
      expect((await ping()).status).toBe(200);
      charged = before - (await balance());
      expect([4, 9]).toContain(charged);
      if (charged !== 9) await new Promise((r) => setTimeout(r, 100));
    }
    expect(charged).toBe(9);

    await call(h.control.url, 'POST', `/v1/provider/apis/${l.apiId}/unpublish`, { token: prov.key });
    const gone = await pingUntil(404);
    expect(gone.status).toBe(404);
  });
});
