/**
 * The in-memory search index (control/catalog/search-index.ts) answers exactly what FTS5 answers (the same ids in the
 * same order, the same total) over text with ties, stems, prefixes and diacritics; follows every kind of write
 * through the change log (migration 0013) without a rebuild; rebuilds when the log has a gap; leaves the search to
 * FTS5 inside another request's open transaction; and builds a large catalog's base in a worker thread.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { openMigratedTempDb, seedOrg } from '../../helpers/db.js';
import { insertListing } from '../../helpers/catalog.js';
import { waitFor } from '../../helpers/wait.js';
import {
  categoriesWithCounts,
  ftsSearch,
  searchCatalog,
  type SearchParams,
} from '../../../control/catalog/search.service.js';
import { listingSummaries, toListingSummary } from '../../../control/catalog/listing-summary.js';
import { deferSearchPaths, discardNewListing, refreshSearchPaths } from '../../../control/catalog/import-store.js';
import { SearchIndex } from '../../../control/catalog/search-index.js';
import { attachSearchIndex, searchIndexOf } from '../../../control/catalog/search-index.owner.js';
import { ftsDefinition, pruneSearchChanges, readIndexBase } from '../../../control/catalog/search-index.base.js';
import { seedCatalog } from '../../../bench/catalog-seed.js';
import { openDatabase, type DbHandles } from '../../../core/db/database.js';
import { SORTS, type Sort } from '../../../core/enumerations.js';
import { createLogger, type Logger } from '../../../core/log.js';

const silent = createLogger('test', 'silent');

let tmp: Awaited<ReturnType<typeof openMigratedTempDb>>;
let h: DbHandles;
let orgId: string;
const apiIds: string[] = [];
const endpointIds: string[][] = [];

const WORDS = ['weather', 'images', 'imaging', 'geocoding', 'café', 'stocks', 'translate', 'translations'];
const CATEGORIES = ['finance', 'maps', 'media'];

beforeAll(async () => {
  tmp = await openMigratedTempDb();
  h = tmp.h;
  orgId = (await seedOrg(h)).orgId;
  const t0 = Date.now();
  for (let i = 0; i < 60; i++) {
    const w = WORDS[i % WORDS.length]!;
    const v = WORDS[(i * 3 + 1) % WORDS.length]!;
    const listing = await insertListing(h, {
      orgId,
      slug: `l-${i}`,
      // every fifth listing repeats another's text: equal bm25, so the later sort columns decide
      name: i % 5 === 0 ? `${w} twin` : `${w} ${v} api ${i}`,
      summary: i % 3 === 0 ? `${v} and ${w} for everyone` : `Résumé of ${v}`,
      description: i % 2 ? `Long ${w} description with ${v} ${v} ${v}` : '',
      tags: i % 4 === 0 ? [v, 'fast'] : [],
      category: CATEGORIES[i % 3]!,
      status: i % 13 === 4 ? 'draft' : 'live',
      suspended: i % 17 === 9,
      publishedAt: t0 - (i % 7) * 1000,
      endpoints: [
        { method: 'GET', path: `/${w}/${i % 3}`, priceCents: (i % 4) * 3 },
        { method: 'POST', path: `/v1/${v}`, priceCents: 9 },
      ],
    });
    apiIds.push(listing.apiId);
    endpointIds.push(listing.endpointIds);
    if (i % 3 !== 1) {
      const calls = (i % 5) * 6;
      await h.db
        .insertInto('api_stats')
        .values({
          api_id: listing.apiId,
          calls_30d: calls,
          success_30d: calls - (i % 2),
          orgs_30d: i % 3,
          gross_30d_cents: 0,
          computed_at: t0,
        })
        .execute();
    }
  }
});
afterAll(() => tmp.close());

const QUERIES: (string[] | null)[] = [
  null,
  ['weather'],
  ['imag'],
  ['images'],
  ['cafe'],
  ['café'],
  ['translat', 'stocks'],
  ['twin', 'twin'],
  ['api', '1'],
  ['resume'],
  ['nothing'],
];
const FILTERS: Pick<SearchParams, 'category' | 'max_price_cents'>[] = [
  {},
  { category: 'finance' },
  { max_price_cents: 0 },
  { category: 'maps', max_price_cents: 6 },
];
const PAGES = [
  { limit: 20, offset: 0 },
  { limit: 5, offset: 3 },
  { limit: 100, offset: 0 },
  { limit: 10, offset: 40 },
];

/** Every query × sort × filter × page: the index's answer equals FTS5's. Returns how many had results. */
async function expectSameAsFts(index: SearchIndex): Promise<number> {
  let nonEmpty = 0;
  for (const words of QUERIES)
    for (const sort of SORTS as readonly Sort[])
      for (const f of FILTERS)
        for (const page of PAGES) {
          const p: SearchParams = { sort, ...f, ...page };
          const fts = await ftsSearch(h.db, p, words ? words.map((w) => `"${w}"*`).join(' OR ') : null);
          const got = index.search({ ...p, sort, words });
          expect(got, JSON.stringify({ words, ...p })).toEqual(fts);
          if (fts.ids.length > 1) nonEmpty++;
        }
  return nonEmpty;
}

function freshIndex(): SearchIndex {
  return new SearchIndex(h.sqlite, readIndexBase(h.sqlite), ftsDefinition(h.sqlite));
}

describe('in-memory search index', () => {
  it('answers every search exactly as FTS5 does: ids, order (bm25 included) and total', async () => {
    const nonEmpty = await expectSameAsFts(freshIndex());
    expect(nonEmpty).toBeGreaterThan(300);
  });

  it('counts searchable listings per category as the SQL does, most first then by name', () => {
    const sqlCounts = h.sqlite
      .prepare('SELECT category, count(*) AS count FROM listing_search GROUP BY category ORDER BY count DESC, category')
      .all();
    expect(sqlCounts.length).toBeGreaterThan(1);
    expect(freshIndex().categoryCounts()).toEqual(sqlCounts);
  });

  it('computes the same bm25 doubles as FTS5 for every match', async () => {
    const index = freshIndex();
    for (const words of QUERIES.filter((q): q is string[] => q !== null)) {
      const match = words.map((w) => `"${w}"*`).join(' OR ');
      const rows = h.sqlite
        .prepare(
          `SELECT l.api_id, bm25(apis_fts, 10.0, 5.0, 1.0, 4.0, 2.0) FROM apis_fts JOIN listing_search l ON l.rowid = apis_fts.rowid WHERE apis_fts MATCH ?`,
        )
        .raw()
        .all(match) as [string, number][];
      expect(index.scores(words), match).toEqual(new Map(rows));
    }
  });

  it('follows each kind of write through the change log, without a rebuild', async () => {
    const index = freshIndex();
    const writes: [string, () => Promise<unknown>][] = [
      [
        'a new live listing',
        () =>
          insertListing(h, {
            orgId,
            slug: 'late',
            name: 'weather late arrival',
            category: 'maps',
            endpoints: [{ method: 'GET', path: '/late', priceCents: 0 }],
          }),
      ],
      [
        'a renamed listing',
        () => h.db.updateTable('apis').set({ name: 'stocks renamed' }).where('id', '=', apiIds[1]!).execute(),
      ],
      [
        'a new description',
        () => h.db.updateTable('apis').set({ description: 'imaging imaging' }).where('id', '=', apiIds[2]!).execute(),
      ],
      [
        'a price change',
        () => h.db.updateTable('endpoints').set({ price_cents: 0 }).where('id', '=', endpointIds[3]![1]!).execute(),
      ],
      [
        'an endpoint path change',
        () =>
          h.db.updateTable('endpoints').set({ path: '/geocoding/now' }).where('id', '=', endpointIds[4]![0]!).execute(),
      ],
      [
        'all endpoints removed',
        () =>
          h.db.updateTable('endpoints').set({ removed_at: Date.now() }).where('id', 'in', endpointIds[5]!).execute(),
      ],
      [
        'new stats',
        () =>
          h.db
            .updateTable('api_stats')
            .set({ orgs_30d: 40, calls_30d: 400, success_30d: 399 })
            .where('api_id', '=', apiIds[6]!)
            .execute(),
      ],
      [
        'a suspension',
        () => h.db.updateTable('apis').set({ suspended_at: Date.now() }).where('id', '=', apiIds[7]!).execute(),
      ],
      ['an unpublish', () => h.db.updateTable('apis').set({ status: 'draft' }).where('id', '=', apiIds[8]!).execute()],
      [
        'a publish',
        () =>
          h.db
            .updateTable('apis')
            .set({ status: 'live' })
            .where('id', '=', apiIds[4 + 13]!)
            .execute(),
      ],
      [
        'a deleted draft',
        async () => {
          await h.db.deleteFrom('endpoints').where('api_id', '=', apiIds[4]!).execute();
          await h.db.deleteFrom('apis').where('id', '=', apiIds[4]!).execute();
        },
      ],
    ];
    for (const [what, write] of writes) {
      await write();
      for (const words of [['weather'], ['stocks', 'imag'], ['geocod'], null]) {
        for (const sort of ['relevance', 'price', 'popularity'] as const) {
          const p: SearchParams = { sort, limit: 100, offset: 0 };
          const fts = await ftsSearch(h.db, p, words ? words.map((w) => `"${w}"*`).join(' OR ') : null);
          expect(index.search({ ...p, sort, words }), `${what}: ${JSON.stringify(words)} ${sort}`).toEqual(fts);
        }
      }
      expect(index.stale, what).toBe(false);
    }
    // and the index that followed the writes matches one built from scratch on the same data
    expect(await expectSameAsFts(index)).toBeGreaterThan(300);
  });

  it('follows an import: endpoints written under the search deferral, then the paths written at once', async () => {
    const index = freshIndex();
    const check = async (what: string) => {
      for (const words of [['imported'], ['geocod'], null]) {
        const p: SearchParams = { sort: 'relevance', limit: 100, offset: 0 };
        const fts = await ftsSearch(h.db, p, words ? words.map((w) => `"${w}"*`).join(' OR ') : null);
        expect(index.search({ ...p, sort: 'relevance', words }), `${what}: ${JSON.stringify(words)}`).toEqual(fts);
      }
    };
    await deferSearchPaths(h.db, apiIds[10]!);
    await h.db
      .insertInto('endpoints')
      .values({
        id: `ep_import_${Date.now()}`,
        api_id: apiIds[10]!,
        method: 'GET',
        path: '/imported/geocoding',
        price_cents: 0,
        discounts_json: '[]',
        position: 9,
        created_at: Date.now(),
        updated_at: Date.now(),
      } as never)
      .execute();
    await check('during the deferral');
    await h.db.transaction().execute((trx) => refreshSearchPaths(trx, apiIds[10]!));
    await check('after the paths were written');
    expect(index.search({ words: ['imported'], sort: 'relevance', limit: 10, offset: 0 })?.total).toBeGreaterThan(0);
  });

  it('keeps search summaries exact through every write a summary shows', async () => {
    const detach = attachSearchIndex(h.db, h.sqlite, silent);
    try {
      const p = { query: 'weather imag', limit: 40, offset: 0 };
      const truth = async () => {
        const { ids } = await ftsSearch(h.db, { ...p, sort: 'relevance' }, '"weather"* OR "imag"*');
        return (await listingSummaries(h.db, { apiIds: ids.slice(0, p.limit) })).map(toListingSummary);
      };
      const shown = (await searchCatalog(h.db, undefined, p)).data;
      expect(shown).toEqual(await truth());
      const target = apiIds.find((id) => shown.some((x) => x.slug === `l-${apiIds.indexOf(id)}`))!;
      const writes: [string, () => Promise<unknown>][] = [
        ['a slug', () => h.db.updateTable('apis').set({ slug: 'renamed-slug' }).where('id', '=', target).execute()],
        [
          'the provider',
          () =>
            h.db
              .insertInto('providers')
              .values({
                org_id: orgId,
                slug: 'prov',
                display_name: 'Provider One',
                created_at: 1,
                updated_at: 1,
              } as never)
              .execute(),
        ],
        [
          'its name',
          () =>
            h.db.updateTable('providers').set({ display_name: 'Provider Two' }).where('org_id', '=', orgId).execute(),
        ],
        [
          'the dearest endpoint',
          () =>
            h.db
              .updateTable('endpoints')
              .set({ price_cents: 99 })
              .where('api_id', '=', target)
              .where('method', '=', 'POST')
              .execute(),
        ],
        [
          'the success count',
          () => h.db.updateTable('api_stats').set({ success_30d: 1 }).where('api_id', '=', target).execute(),
        ],
      ];
      for (const [what, write] of writes) {
        await write();
        expect((await searchCatalog(h.db, undefined, p)).data, what).toEqual(await truth());
      }
    } finally {
      detach();
    }
  });

  it('rebuilds when the change log has a gap (entries it has not applied were pruned)', async () => {
    const attached = await openMigratedTempDb();
    try {
      const detach = attachSearchIndex(attached.h.db, attached.h.sqlite, silent);
      const org = await seedOrg(attached.h);
      const one = () =>
        insertListing(attached.h, {
          orgId: org.orgId,
          slug: `g-${Math.random().toString(36).slice(2)}`,
          name: 'weather gap',
          endpoints: [{ method: 'GET', path: '/g', priceCents: 1 }],
        });
      await one();
      const first = searchIndexOf(attached.h.db)!;
      expect(first.search({ words: ['weather'], sort: 'relevance', limit: 10, offset: 0 })?.total).toBe(1);
      await one();
      await pruneSearchChanges(attached.h.db, 0);
      expect(first.search({ words: ['weather'], sort: 'relevance', limit: 10, offset: 0 })).toBeUndefined();
      expect(first.stale).toBe(true);
      // the owner builds a new base (in place: a small catalog) that sees both listings
      const second = searchIndexOf(attached.h.db)!;
      expect(second).not.toBe(first);
      expect(second.search({ words: ['weather'], sort: 'relevance', limit: 10, offset: 0 })?.total).toBe(2);
      detach();
      expect(searchIndexOf(attached.h.db)).toBeUndefined();
    } finally {
      await attached.close();
    }
  });

  it('builds a fresh base once many listings were re-tokenized, answering from the old one until then', async () => {
    const attached = await openMigratedTempDb();
    try {
      const detach = attachSearchIndex(attached.h.db, attached.h.sqlite, silent);
      const org = await seedOrg(attached.h);
      const first = searchIndexOf(attached.h.db)!;
      for (let i = 0; i < 140; i++)
        await insertListing(attached.h, {
          orgId: org.orgId,
          slug: `c-${i}`,
          name: `weather compact ${i}`,
          endpoints: [{ method: 'GET', path: '/c', priceCents: i % 3 }],
        });
      const p = { words: ['weather'], sort: 'price' as const, limit: 50, offset: 10 };
      const fts = await ftsSearch(attached.h.db, p, '"weather"*');
      expect(first.search(p)).toEqual(fts);
      expect(first.wantsCompaction).toBe(true);
      const second = searchIndexOf(attached.h.db)!;
      expect(second).not.toBe(first);
      expect(second.wantsCompaction).toBe(false);
      expect(second.search(p)).toEqual(fts);
      detach();
    } finally {
      await attached.close();
    }
  });

  it('stops answering (FTS5 does) once more listings changed since its base than a query should scan', async () => {
    const own = await openMigratedTempDb();
    try {
      const org = await seedOrg(own.h);
      // Nothing builds a fresh base for this index: as when the compaction worker keeps failing.
      const index = new SearchIndex(own.h.sqlite, readIndexBase(own.h.sqlite), ftsDefinition(own.h.sqlite));
      const p = { words: ['weather'], sort: 'relevance' as const, limit: 10, offset: 0 };
      for (let batch = 0; batch < 12; batch++) {
        for (let i = 0; i < 100; i++)
          await insertListing(own.h, {
            orgId: org.orgId,
            slug: `o-${batch}-${i}`,
            name: `weather overlay ${batch} ${i}`,
            endpoints: [{ method: 'GET', path: '/o', priceCents: 1 }],
          });
        index.search(p);
      }
      // every query would scan the text of 1,200 listings beside the base
      expect(index.stale).toBe(true);
      expect(index.search(p)).toBeUndefined();
    } finally {
      await own.close();
    }
  });

  it('builds a fresh base once many listings were dropped since it (their postings are still scanned)', async () => {
    const own = await openMigratedTempDb();
    try {
      const org = await seedOrg(own.h);
      const ids: string[] = [];
      for (let i = 0; i < 140; i++)
        ids.push(
          (
            await insertListing(own.h, {
              orgId: org.orgId,
              slug: `d-${i}`,
              name: `weather dropped ${i}`,
              status: 'draft',
              endpoints: [{ method: 'GET', path: '/d', priceCents: 1 }],
            })
          ).apiId,
        );
      await insertListing(own.h, {
        orgId: org.orgId,
        slug: 'kept',
        name: 'weather kept',
        endpoints: [{ method: 'GET', path: '/k', priceCents: 1 }],
      });
      const detach = attachSearchIndex(own.h.db, own.h.sqlite, silent);
      const first = searchIndexOf(own.h.db)!;
      // imports that failed after their listing was created remove it again (import-store.ts)
      for (const id of ids) await discardNewListing(own.h.db, id);
      const p = { words: ['weather'], sort: 'relevance' as const, limit: 10, offset: 0 };
      expect(first.search(p)).toEqual(await ftsSearch(own.h.db, p, '"weather"*'));
      expect(first.wantsCompaction).toBe(true);
      const second = searchIndexOf(own.h.db)!;
      expect(second).not.toBe(first);
      expect(second.wantsCompaction).toBe(false);
      expect(second.search(p)).toEqual(await ftsSearch(own.h.db, p, '"weather"*'));
      detach();
    } finally {
      await own.close();
    }
  });

  /** A database with one listing whose index base cannot be read: a table is in the way of its token reader. */
  async function withUnbuildableBase() {
    const own = await openMigratedTempDb();
    const org = await seedOrg(own.h);
    await insertListing(own.h, {
      orgId: org.orgId,
      slug: 'w',
      name: 'weather now',
      endpoints: [{ method: 'GET', path: '/w', priceCents: 1 }],
    });
    own.h.sqlite.exec('CREATE TEMP TABLE apis_fts_instances (x)');
    return own;
  }

  it('leaves searches to FTS5 when the base cannot be built, instead of failing them', async () => {
    const own = await withUnbuildableBase();
    try {
      const detach = attachSearchIndex(own.h.db, own.h.sqlite, silent);
      try {
        for (let i = 0; i < 2; i++) {
          expect(searchIndexOf(own.h.db)).toBeUndefined();
          const found = await searchCatalog(own.h.db, undefined, { query: `weather ${i}`, limit: 10, offset: 0 });
          expect(found.data.map((s) => s.slug)).toEqual(['w']);
          expect((await categoriesWithCounts(own.h.db, undefined)).length).toBe(1);
        }
      } finally {
        detach();
      }
    } finally {
      await own.close();
    }
  });

  it('logs a failed build once, not again on each retry, and builds once the cause is gone', async () => {
    const own = await withUnbuildableBase();
    const warnings: Array<{ msg: string; fields: Record<string, unknown> | undefined }> = [];
    const log: Logger = { ...silent, warn: (msg, fields) => warnings.push({ msg, fields }) };
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const detach = attachSearchIndex(own.h.db, own.h.sqlite, log);
      try {
        // The first use builds and fails; each later use past the 30 s retry pause tries again and fails again.
        for (let i = 0; i < 3; i++) {
          expect(searchIndexOf(own.h.db)).toBeUndefined();
          vi.setSystemTime(Date.now() + 31_000);
        }
        expect(warnings).toHaveLength(1);
        expect(warnings[0]!.msg).toMatch(/search index build failed/);
        expect(warnings[0]!.fields).toMatchObject({ retry_in_ms: 30_000 });
        expect(String((warnings[0]!.fields!.err as Error).message)).toMatch(/apis_fts_instances|no such|column/i);
        own.h.sqlite.exec('DROP TABLE temp.apis_fts_instances');
        expect(searchIndexOf(own.h.db)).toBeDefined();
        expect(warnings).toHaveLength(1);
      } finally {
        detach();
      }
    } finally {
      vi.useRealTimers();
      await own.close();
    }
  });

  it('keeps only the newest change-log entries when pruned', async () => {
    const before = Number(h.sqlite.prepare('SELECT count(*) FROM search_changes').pluck().get());
    expect(before).toBeGreaterThan(10);
    const last = Number(h.sqlite.prepare('SELECT max(seq) FROM search_changes').pluck().get());
    await pruneSearchChanges(h.db, 10);
    expect(h.sqlite.prepare('SELECT min(seq), max(seq), count(*) FROM search_changes').raw().get()).toEqual([
      last - 9,
      last,
      10,
    ]);
  });

  it('leaves the search to FTS5 inside an open transaction on its connection (it would see uncommitted rows)', () => {
    const index = freshIndex();
    h.sqlite.exec('BEGIN');
    try {
      expect(index.search({ words: ['weather'], sort: 'relevance', limit: 10, offset: 0 })).toBeUndefined();
    } finally {
      h.sqlite.exec('ROLLBACK');
    }
    expect(index.search({ words: ['weather'], sort: 'relevance', limit: 10, offset: 0 })).toBeDefined();
  });

  it('builds a large catalog in a worker thread and answers as FTS5 does once it arrives', async () => {
    const file = join(tmp.dir, 'large.db');
    await seedCatalog(file, 700);
    const large = openDatabase(file);
    const detach = attachSearchIndex(large.db, large.sqlite, silent);
    try {
      // the first search starts the build and is left to FTS5
      expect(searchIndexOf(large.db)).toBeUndefined();
      const index = await waitFor(
        async () => searchIndexOf(large.db),
        (i) => i !== undefined,
        20_000,
      );
      if (!index) throw new Error('the worker never delivered the index');
      for (const words of [['weather'], ['translate', 'images'], null])
        for (const sort of SORTS as readonly Sort[]) {
          const p: SearchParams = { sort, limit: 120, offset: 30 };
          const fts = await ftsSearch(large.db, p, words ? words.map((w) => `"${w}"*`).join(' OR ') : null);
          expect(index.search({ ...p, sort, words })).toEqual(fts);
        }
    } finally {
      detach();
      await large.close();
    }
  });
});
