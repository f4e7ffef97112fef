import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { createLiveListing, smallOpenApi, startStubUpstream, type StubUpstream } from '../../helpers/catalog.js';
import type { DbHandles } from '../../../core/db/database.js';
import { waitFor } from '../../helpers/wait.js';

const DAY = 86_400_000;
let h: ControlHarness;
let db: DbHandles;
let up: StubUpstream;
let org: SeededOrg;
let clockFile: string;

function moveClock(ms: number): void {
  writeFileSync(clockFile, String(ms));
}

beforeAll(async () => {
  up = await startStubUpstream();
  const tmp = (await import('node:os')).tmpdir();
  clockFile = join(tmp, `svc-clock-${process.pid}-${Date.now()}`);
  moveClock(0);
  h = await startControl({ SVC_CLOCK_OFFSET_FILE: clockFile, SVC_PRICE_NOTICE_DAYS: '7' });
  db = openTestDb(h.dataDir);
  org = await seedOrg(db);
});
afterAll(async () => {
  await db.close();
  await h.stop();
  await up.close();
});

const price = async (endpointId: string) =>
  await db.db
    .selectFrom('endpoints')
    .select(['price_cents', 'discounts_json'])
    .where('id', '=', endpointId)
    .executeTakeFirstOrThrow();

describe('pricing', () => {
  it('applies every change at once on a draft listing', async () => {
    const c = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: smallOpenApi('Draft Priced'), base_url: up.url },
    });
    const ep = c.body.endpoints[0].endpoint_id as string;
    const r = await call(h.control.url, 'PUT', `/v1/provider/apis/${c.body.api_id}/pricing`, {
      token: org.key,
      body: { endpoints: [{ endpoint_id: ep, price_cents: 25, discounts: [{ min_calls: 100, percent_off: 10 }] }] },
    });
    expect(r.status).toBe(200);
    expect(r.body.results[0]).toMatchObject({ outcome: 'applied', price_cents: 25 });
    expect(await price(ep)).toEqual({
      price_cents: 25,
      discounts_json: JSON.stringify([{ min_calls: 100, percent_off: 10 }]),
    });
  });

  it('schedules an increase on a live listing, applies a decrease at once, cancels pending, and applies due increases by itself', async () => {
    const l = await createLiveListing(h.control.url, org.key, {
      baseUrl: up.url,
      name: 'Live Priced',
      prices: { 'GET /ping': 10, 'POST /items': 50 },
    });
    const ping = l.endpoints['GET /ping']!;
    const post = l.endpoints['POST /items']!;
    const changesBefore = await db.db
      .selectFrom('changes')
      .select(db.db.fn.countAll<number>().as('n'))
      .where('entity', '=', 'api')
      .where('entity_id', '=', l.apiId)
      .executeTakeFirstOrThrow();

    const inc = await call(h.control.url, 'PUT', `/v1/provider/apis/${l.apiId}/pricing`, {
      token: org.key,
      body: {
        endpoints: [
          { endpoint_id: ping, price_cents: 15 },
          { endpoint_id: post, price_cents: 40 },
        ],
      },
    });
    expect(inc.status).toBe(200);
    const byId = Object.fromEntries(inc.body.results.map((r: { endpoint_id: string }) => [r.endpoint_id, r]));
    expect(byId[ping]).toMatchObject({ outcome: 'scheduled', price_cents: 15 });
    expect(Date.parse(byId[ping].effective_at) - Date.now()).toBeGreaterThan(6.9 * DAY);
    expect(byId[post]).toMatchObject({ outcome: 'applied', price_cents: 40 });
    expect((await price(ping)).price_cents).toBe(10);
    expect((await price(post)).price_cents).toBe(40);
    const changesAfter = await db.db
      .selectFrom('changes')
      .select(db.db.fn.countAll<number>().as('n'))
      .where('entity', '=', 'api')
      .where('entity_id', '=', l.apiId)
      .executeTakeFirstOrThrow();
    expect(Number(changesAfter.n)).toBeGreaterThan(Number(changesBefore.n));

    // consumers can see the pending increase
    const detail = await call(h.control.url, 'GET', `/v1/provider/apis/${l.apiId}`, { token: org.key });
    expect(
      detail.body.endpoints.find((e: { endpoint_id: string }) => e.endpoint_id === ping).pending_price,
    ).toMatchObject({ new_price_cents: 15, old_price_cents: 10 });

    const cancel = await call(h.control.url, 'DELETE', `/v1/provider/apis/${l.apiId}/pricing/${ping}/pending`, {
      token: org.key,
    });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ status: 'cancelled', new_price_cents: 15 });
    const again = await call(h.control.url, 'DELETE', `/v1/provider/apis/${l.apiId}/pricing/${ping}/pending`, {
      token: org.key,
    });
    expect(again.status).toBe(404);

    // a fresh increase is scheduled again, and applied when due without anyone acting
    const disc = await call(h.control.url, 'PUT', `/v1/provider/apis/${l.apiId}/pricing`, {
      token: org.key,
      body: { endpoints: [{ endpoint_id: ping, price_cents: 12 }] },
    });
    expect(disc.body.results[0].outcome).toBe('scheduled');

    moveClock(8 * DAY);
    const applied = await waitFor(
      () => price(ping),
      (p) => p.price_cents === 12,
    );
    expect(applied.price_cents).toBe(12);
    const rows = await db.db
      .selectFrom('price_changes')
      .select(['status', 'new_price_cents'])
      .where('endpoint_id', '=', ping)
      .orderBy('created_at')
      .execute();
    expect(rows.map((r) => r.status)).toEqual(['applied', 'cancelled', 'applied']);
    const act = await db.db
      .selectFrom('activity')
      .select('kind')
      .where('api_id', '=', l.apiId)
      .where('kind', '=', 'price_change')
      .execute();
    expect(act.length).toBeGreaterThanOrEqual(2);
    moveClock(0);
  });

  it('an unpublished (once live) listing still needs notice for an increase', async () => {
    const l = await createLiveListing(h.control.url, org.key, {
      baseUrl: up.url,
      name: 'Unpublish Trick',
      prices: { 'GET /ping': 10 },
    });
    await call(h.control.url, 'POST', `/v1/provider/apis/${l.apiId}/unpublish`, { token: org.key });
    const r = await call(h.control.url, 'PUT', `/v1/provider/apis/${l.apiId}/pricing`, {
      token: org.key,
      body: { endpoints: [{ endpoint_id: l.endpoints['GET /ping']!, price_cents: 99 }] },
    });
    expect(r.body.results[0].outcome).toBe('scheduled');
    expect((await price(l.endpoints['GET /ping']!)).price_cents).toBe(10);
  });

  it('treats removing a discount tier on a live listing as an increase', async () => {
    const l = await createLiveListing(h.control.url, org.key, { baseUrl: up.url, name: 'Discounted' });
    const ep = l.endpoints['GET /ping']!;
    const first = await call(h.control.url, 'PUT', `/v1/provider/apis/${l.apiId}/pricing`, {
      token: org.key,
      body: { endpoints: [{ endpoint_id: ep, price_cents: 0 }] },
    });
    expect(first.body.results[0].outcome).toBe('unchanged');
    await db.db
      .updateTable('endpoints')
      .set({ price_cents: 20, discounts_json: JSON.stringify([{ min_calls: 10, percent_off: 50 }]) })
      .where('id', '=', ep)
      .execute();
    const r = await call(h.control.url, 'PUT', `/v1/provider/apis/${l.apiId}/pricing`, {
      token: org.key,
      body: { endpoints: [{ endpoint_id: ep, price_cents: 20, discounts: [] }] },
    });
    expect(r.body.results[0].outcome).toBe('scheduled');
    const more = await call(h.control.url, 'PUT', `/v1/provider/apis/${l.apiId}/pricing`, {
      token: org.key,
      body: { endpoints: [{ endpoint_id: ep, price_cents: 20, discounts: [{ min_calls: 5, percent_off: 50 }] }] },
    });
    expect(more.body.results[0].outcome).toBe('applied');
  });

  it.each([
    ['a negative price', [{ endpoint_id: 'X', price_cents: -1 }]],
    ['a fractional price', [{ endpoint_id: 'X', price_cents: 1.5 }]],
    [
      'unsorted tiers',
      [
        {
          endpoint_id: 'X',
          price_cents: 5,
          discounts: [
            { min_calls: 10, percent_off: 5 },
            { min_calls: 5, percent_off: 10 },
          ],
        },
      ],
    ],
    ['an empty list', []],
  ])('refuses %s', async (_n, endpoints) => {
    const c = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: smallOpenApi('Bad Prices') },
    });
    const body = {
      endpoints: JSON.parse(
        JSON.stringify(endpoints).replaceAll('"X"', JSON.stringify(c.body.endpoints[0].endpoint_id)),
      ),
    };
    const r = await call(h.control.url, 'PUT', `/v1/provider/apis/${c.body.api_id}/pricing`, { token: org.key, body });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
  });

  it('refuses an endpoint of another listing', async () => {
    const a = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: smallOpenApi('A1') },
    });
    const b = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: smallOpenApi('B1') },
    });
    const r = await call(h.control.url, 'PUT', `/v1/provider/apis/${a.body.api_id}/pricing`, {
      token: org.key,
      body: { endpoints: [{ endpoint_id: b.body.endpoints[0].endpoint_id, price_cents: 3 }] },
    });
    expect(r.status).toBe(404);
  });
});
