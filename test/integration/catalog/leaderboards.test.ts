import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedOrg, usageWithIds } from '../../helpers/db.js';
import { insertListing } from '../../helpers/catalog.js';
import type { Db, DbHandles } from '../../../core/db/database.js';
import { newId } from '../../../core/ids.js';
import { insertUsageCalls, type UsageCallInput } from '../../../core/db/id-nums.js';

let h: ControlHarness;
let db: DbHandles;
const HOUR = 3_600_000;

async function usage(
  trx: Db,
  apiId: string,
  endpointId: string,
  providerOrgId: string,
  orgId: string,
  calls: number,
  opts: { cents: number; failEvery?: number; ageMs?: number },
): Promise<void> {
  const rows: UsageCallInput[] = [];
  const now = Date.now();
  for (let i = 0; i < calls; i++) {
    const failed = opts.failEvery !== undefined && i % opts.failEvery === 0;
    rows.push({
      request_id: newId('req'),
      org_id: orgId,
      key_id: 'key_x',
      api_id: apiId,
      endpoint_id: endpointId,
      provider_org_id: providerOrgId,
      method: 'GET',
      status: failed ? 502 : 200,
      latency_ms: 20 + (i % 50),
      price_cents: opts.cents,
      charged_cents: failed ? 0 : opts.cents,
      error_code: failed ? 'upstream_error' : null,
      created_at: now - (opts.ageMs ?? HOUR) - i,
    });
  }
  for (let i = 0; i < rows.length; i += 500) await insertUsageCalls(trx, rows.slice(i, i + 500));
}

let gamer: { apiId: string };
let honest: { apiId: string };

beforeAll(async () => {
  h = await startControl({ SVC_LEADERBOARD_REFRESH_MS: '300' });
  db = openTestDb(h.dataDir);
  const gamerOrg = await seedOrg(db);
  const honestOrg = await seedOrg(db);
  const loneOrg = await seedOrg(db);
  gamer = await insertListing(db, {
    orgId: gamerOrg.orgId,
    slug: 'gamer-api',
    name: 'Gamer API',
    category: 'data',
    endpoints: [{ method: 'GET', path: '/g', priceCents: 10 }],
  });
  honest = await insertListing(db, {
    orgId: honestOrg.orgId,
    slug: 'honest-api',
    name: 'Honest API',
    category: 'data',
    endpoints: [{ method: 'GET', path: '/h', priceCents: 10 }],
  });
  const lone = await insertListing(db, {
    orgId: loneOrg.orgId,
    slug: 'lone-api',
    name: 'Lone API',
    category: 'tools',
    endpoints: [{ method: 'GET', path: '/l', priceCents: 10 }],
  });
  const gEp = (
    await db.db.selectFrom('endpoints').select('id').where('api_id', '=', gamer.apiId).executeTakeFirstOrThrow()
  ).id;
  const hEp = (
    await db.db.selectFrom('endpoints').select('id').where('api_id', '=', honest.apiId).executeTakeFirstOrThrow()
  ).id;
  const lEp = (
    await db.db.selectFrom('endpoints').select('id').where('api_id', '=', lone.apiId).executeTakeFirstOrThrow()
  ).id;
  // One transaction: the control's refresh job runs every 300 ms and must never rank a half-seeded history
  // (a snapshot with only a few honest consumers can legitimately put the gamer first).
  await db.db.transaction().execute(async (trx) => {
    // The gamer calls its own API heavily from its own org and from three sock-puppet orgs: 10x the honest gross.
    await usage(trx, gamer.apiId, gEp, gamerOrg.orgId, gamerOrg.orgId, 3000, { cents: 10 });
    for (let i = 0; i < 3; i++) await usage(trx, gamer.apiId, gEp, gamerOrg.orgId, newId('org'), 400, { cents: 10 });
    // Fifteen independent consumers make a few calls each, with an occasional upstream failure.
    for (let i = 0; i < 15; i++)
      await usage(trx, honest.apiId, hEp, honestOrg.orgId, newId('org'), 8, {
        cents: 10,
        failEvery: i === 0 ? 4 : undefined,
      });
    await usage(trx, lone.apiId, lEp, loneOrg.orgId, newId('org'), 500, { cents: 10 });
  });
});
afterAll(async () => {
  await db.close();
  await h.stop();
});

async function board(name: string, qs = ''): Promise<{ slug: string; rank: number }[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await call(h.control.url, 'GET', `/v1/leaderboards/${name}${qs}`);
    expect(r.status).toBe(200);
    const entries = (r.body.entries as { rank: number; listing: { slug: string } }[]).map((e) => ({
      slug: e.listing.slug,
      rank: e.rank,
    }));
    if (entries.some((e) => e.slug === 'honest-api') || Date.now() > deadline) return entries;
    await new Promise((res) => setTimeout(res, 200));
  }
}

describe('leaderboards resist self-dealing', () => {
  it('the gamer out-grosses the honest listing in raw numbers', async () => {
    const g = await db.db
      .selectFrom(usageWithIds(db.db))
      .select(db.db.fn.sum<number>('charged_cents').as('s'))
      .where('api_id', '=', gamer.apiId)
      .executeTakeFirstOrThrow();
    const o = await db.db
      .selectFrom(usageWithIds(db.db))
      .select(db.db.fn.sum<number>('charged_cents').as('s'))
      .where('api_id', '=', honest.apiId)
      .executeTakeFirstOrThrow();
    expect(Number(g.s)).toBeGreaterThan(10 * Number(o.s));
  });

  it.each(['top_grossing', 'most_used', 'most_reliable'])(
    '%s puts the listing with many independent consumers first',
    async (name) => {
      const entries = await board(name);
      expect(entries[0]?.slug).toBe('honest-api');
      const g = entries.find((e) => e.slug === 'gamer-api');
      if (g) expect(g.rank).toBeGreaterThan(1);
    },
  );

  it('a listing used by one org is on no board', async () => {
    for (const name of ['top_grossing', 'most_used', 'most_reliable', 'best_value']) {
      const entries = await board(name);
      expect(entries.find((e) => e.slug === 'lone-api')).toBeUndefined();
    }
  });

  it('an empty board still says when the job last ran; categories are normalised', async () => {
    // The earlier tests waited for a refresh, so the job has run.
    const data = await call(h.control.url, 'GET', '/v1/leaderboards/top_grossing?category=data');
    expect((await call(h.control.url, 'GET', '/v1/leaderboards/top_grossing?category=DATA')).body.entries).toEqual(
      data.body.entries,
    );
    const empty = await call(h.control.url, 'GET', '/v1/leaderboards/top_grossing?category=no-such-category');
    expect(empty.status).toBe(200);
    expect(empty.body.entries).toEqual([]);
    expect(empty.body.computed_at).toEqual(expect.any(String));
  });

  it('has per-category boards, ranks on the listing, and refuses unknown boards', async () => {
    const data = await board('top_grossing', '?category=data');
    expect(data[0]?.slug).toBe('honest-api');
    const tools = await call(h.control.url, 'GET', '/v1/leaderboards/top_grossing?category=tools');
    expect(tools.body.entries).toEqual([]);
    const ranks = await call(h.control.url, 'GET', '/v1/apis/honest-api/ranks');
    expect(ranks.body.ranks).toEqual(
      expect.arrayContaining([expect.objectContaining({ board: 'top_grossing', category: null, rank: 1 })]),
    );
    const bad = await call(h.control.url, 'GET', '/v1/leaderboards/richest');
    expect(bad.status).toBe(400);
  });

  it('search popularity sort reads the materialized stats (distinct orgs first)', async () => {
    const r = await call(h.control.url, 'GET', '/v1/catalog/search?sort=popularity');
    expect(r.body.data[0].slug).toBe('honest-api');
    expect(r.body.data[0].calls_30d).toBe(120);
  });

  it('market overview counts listings, providers and calls', async () => {
    const r = await call(h.control.url, 'GET', '/v1/market/overview');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ live_listings: 3, providers: 3 });
    expect(r.body.windows['24h'].calls).toBe(3000 + 1200 + 120 + 500);
    expect(r.body.top_categories[0].category).toBe('data');
  });
});
