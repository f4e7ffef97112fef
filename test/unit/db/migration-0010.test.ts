/**
 * 0010 backfills `listing_search` from the listings already there: every live, unsuspended listing with a current
 * endpoint gets its row (cheapest current price, stats), and nothing else does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql } from 'kysely';
import { openDatabase, type DbHandles } from '../../../core/db/database.js';
import { migrations } from '../../../core/db/migrations/index.js';
import { seedOrg } from '../../helpers/db.js';
import { insertListing } from '../../helpers/catalog.js';

let dir = '';
let h: DbHandles | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('migration 0010_listing_search', () => {
  it('backfills a row per searchable listing with its cheapest current price and stats', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-mig-'));
    h = openDatabase(join(dir, 'svc.db'));
    const migrator = new Migrator({ db: h.db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('0009_oauth')).error).toBeUndefined();
    const org = await seedOrg(h);
    const ep = (priceCents: number) => ({ method: 'GET', path: `/p${priceCents}`, priceCents });
    const live = await insertListing(h, {
      orgId: org.orgId,
      slug: 'live',
      name: 'Live',
      category: 'maps',
      endpoints: [ep(30), ep(7), ep(2)],
      publishedAt: 1_000,
    });
    // its cheapest endpoint was removed: the next one counts
    await h.db.updateTable('endpoints').set({ removed_at: 5 }).where('id', '=', live.endpointIds[2]!).execute();
    await h.db
      .insertInto('api_stats')
      .values({ api_id: live.apiId, calls_30d: 20, success_30d: 15, orgs_30d: 3, gross_30d_cents: 0, computed_at: 1 })
      .execute();
    await insertListing(h, { orgId: org.orgId, slug: 'draft', name: 'Draft', status: 'draft', endpoints: [ep(1)] });
    await insertListing(h, { orgId: org.orgId, slug: 'susp', name: 'Susp', suspended: true, endpoints: [ep(1)] });
    const empty = await insertListing(h, { orgId: org.orgId, slug: 'empty', name: 'Empty', endpoints: [ep(1)] });
    await h.db.updateTable('endpoints').set({ removed_at: 5 }).where('api_id', '=', empty.apiId).execute();

    expect((await migrator.migrateTo('0010_listing_search')).error).toBeUndefined();
    const rows = (
      await sql`SELECT rowid, api_id, category, published_at, min_price_cents, orgs_30d, calls_30d, reliability
        FROM listing_search`.execute(h.db)
    ).rows;
    const apiRowid = h.sqlite.prepare('SELECT rowid FROM apis WHERE id = ?').pluck().get(live.apiId);
    expect(rows).toEqual([
      {
        rowid: apiRowid,
        api_id: live.apiId,
        category: 'maps',
        published_at: 1_000,
        min_price_cents: 7,
        orgs_30d: 3,
        calls_30d: 20,
        reliability: 0.75,
      },
    ]);
  });
});
