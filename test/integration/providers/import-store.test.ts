/**
 * A new listing's endpoints are written by the import worker through its own SQLite connection, in short
 * transactions (control/catalog/import-store.ts): every endpoint arrives, in order, indexed for search; the import
 * answers with a first page and a link instead of every endpoint; a write that fails halfway leaves nothing.
 */
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedListing, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { startProcess } from '../../helpers/processes.js';
import type { DbHandles } from '../../../core/db/database.js';

let h: ControlHarness;
let db: DbHandles;
let org: SeededOrg;

/** Enough operations for many worker transactions (each holds the lock a few ms) and many response pages. */
const PATHS = 1_500;
/** Those plus one whose response is a recursive schema. */
const OPERATIONS = PATHS + 1;

function manyOperations(title: string, pathWord: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < PATHS; i++)
    paths[`/${pathWord}-${i}/{id}`] = {
      get: {
        operationId: `get${i}`,
        summary: `Item ${i}`,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    };
  // A recursive schema stays a named component, which the worker stores with the listing.
  paths[`/${pathWord}-tree`] = {
    get: {
      responses: {
        '200': {
          description: 'ok',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } },
        },
      },
    },
  };
  const Node = { type: 'object', properties: { child: { $ref: '#/components/schemas/Node' } } };
  return { openapi: '3.0.3', info: { title, version: '1.0.0' }, paths, components: { schemas: { Node } } };
}

async function endpointsUnder(prefix: string, handles = db): Promise<number> {
  const r = await handles.db
    .selectFrom('endpoints')
    .select(handles.db.fn.countAll<number>().as('n'))
    .where('path', 'like', `/${prefix}-%`)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

async function deferredListings(handles = db): Promise<number> {
  const r = await sql<{ n: number }>`SELECT count(*) AS n FROM fts_deferred`.execute(handles.db);
  return r.rows[0]!.n;
}

async function listingsNamed(name: string): Promise<{ id: string }[]> {
  return db.db.selectFrom('apis').select('id').where('name', '=', name).execute();
}

beforeAll(async () => {
  h = await startControl();
  db = openTestDb(h.dataDir);
  org = await seedOrg(db);
});
afterAll(async () => {
  await db.close();
  await h.stop();
});

describe('endpoints written by the import worker', () => {
  it('writes every endpoint in document order, indexes the paths, and answers with a first page and a link', async () => {
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: manyOperations('Worker Written', 'zebrafish') },
    });
    expect(r.status).toBe(201);
    const apiId = r.body.api_id as string;
    expect(r.body).toMatchObject({
      endpoint_count: OPERATIONS,
      endpoints_has_more: true,
      endpoints_url: `/v1/provider/apis/${apiId}/endpoints`,
      import_report: { endpoints_imported: OPERATIONS },
    });
    expect(r.body.endpoints).toHaveLength(100);
    expect(r.body.endpoints[0]).toMatchObject({ method: 'GET', path: '/zebrafish-0/{id}', price_cents: 0 });

    // Paging through endpoints_url yields every endpoint once, in document order.
    const paths: string[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await call(h.control.url, 'GET', `${r.body.endpoints_url}?limit=100&offset=${offset}`, {
        token: org.key,
      });
      expect(page.status).toBe(200);
      paths.push(...(page.body.data as { path: string }[]).map((e) => e.path));
      if (!page.body.has_more) break;
    }
    expect(paths).toEqual([...Array.from({ length: PATHS }, (_, i) => `/zebrafish-${i}/{id}`), '/zebrafish-tree']);

    const rows = await db.db
      .selectFrom('endpoints')
      .select(['position', 'response_schema_json'])
      .where('api_id', '=', apiId)
      .orderBy('position')
      .execute();
    expect(rows.map((e) => e.position)).toEqual(Array.from({ length: OPERATIONS }, (_, i) => i));
    expect(rows.every((e) => e.response_schema_json !== null)).toBe(true);

    // The document and the named components, written by the worker too, are served from the listing.
    const stored = await db.db
      .selectFrom('apis')
      .select(['openapi_gz', 'schema_components_json'])
      .where('id', '=', apiId)
      .executeTakeFirstOrThrow();
    expect(Object.keys(JSON.parse(gunzipSync(stored.openapi_gz!).toString('utf8')).paths)).toHaveLength(OPERATIONS);
    expect(JSON.parse(stored.schema_components_json)).toHaveProperty('Node');

    // The search index has the paths, and the per-row triggers are live again for this listing.
    const hits = await sql<{ id: string }>`SELECT apis.id FROM apis_fts JOIN apis ON apis.rowid = apis_fts.rowid
      WHERE apis_fts MATCH 'zebrafish'`.execute(db.db);
    expect(hits.rows.map((x) => x.id)).toEqual([apiId]);
    expect(await deferredListings()).toBe(0);

    // A re-import answers the same way: a page, the count, the link; matched endpoints keep their ids.
    const again = await call(h.control.url, 'POST', `/v1/provider/apis/${apiId}/import`, {
      token: org.key,
      body: { body: manyOperations('Worker Written', 'zebrafish') },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ endpoint_count: OPERATIONS, endpoints_has_more: true, added: 0, removed: 0 });
    expect(again.body.endpoints).toHaveLength(100);
    expect(again.body.endpoints[0].endpoint_id).toBe(r.body.endpoints[0].endpoint_id);

    // Another org cannot page through them.
    const other = await seedOrg(db);
    const foreign = await call(h.control.url, 'GET', `${r.body.endpoints_url}`, { token: other.key });
    expect(foreign.status).toBe(404);
  });

  it('leaves nothing behind when the worker write fails halfway', async () => {
    // The 900th endpoint's insert fails: by then the worker has committed several hundred rows.
    await sql
      .raw(
        `CREATE TRIGGER test_fail_endpoint BEFORE INSERT ON endpoints WHEN new.path = '/halfway-900/{id}'
         BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`,
      )
      .execute(db.db);
    const doc = manyOperations('Halfway Import', 'halfway');
    try {
      const r = await call(h.control.url, 'POST', '/v1/provider/apis', { token: org.key, body: { body: doc } });
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('import_failed');
    } finally {
      await sql.raw('DROP TRIGGER test_fail_endpoint').execute(db.db);
    }
    expect(await listingsNamed('Halfway Import')).toEqual([]);
    expect(await endpointsUnder('halfway')).toBe(0);
    expect(await deferredListings()).toBe(0);

    // The same document imports cleanly afterwards, under the same slug.
    const again = await call(h.control.url, 'POST', '/v1/provider/apis', { token: org.key, body: { body: doc } });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ slug: 'halfway-import', endpoint_count: OPERATIONS });
  });

  it('writes nothing when the listing cannot be created from the parsed document', async () => {
    const doc = manyOperations('', 'untitled');
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', { token: org.key, body: { body: doc } });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 'import_failed', at: '/info/title' });
    expect(await endpointsUnder('untitled')).toBe(0);
    // The worker that dropped that import serves the next one.
    const named = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: doc, name: 'Named Untitled' },
    });
    expect(named.status).toBe(201);
    expect(named.body.endpoint_count).toBe(OPERATIONS);
  });

  it('removes, at the next start, a listing whose import the control process never finished', async () => {
    const other = await startControl();
    const odb = openTestDb(other.dataDir);
    try {
      const owner = await seedOrg(odb);
      const endpoints = [{ method: 'GET', path: '/half', priceCents: 0 }];
      // As a stopped import leaves it: a draft still in fts_deferred with some endpoint rows written.
      const cut = await seedListing(odb, {
        orgId: owner.orgId,
        slug: 'cut-short',
        baseUrl: 'https://x.test',
        endpoints,
        status: 'draft',
      });
      const live = await seedListing(odb, {
        orgId: owner.orgId,
        slug: 'still-live',
        baseUrl: 'https://x.test',
        endpoints,
      });
      for (const id of [cut.apiId, live.apiId])
        await sql`INSERT INTO fts_deferred (api_id) VALUES (${id})`.execute(odb.db);
      await other.control.stop();
      const restarted = await startProcess('control', 'control/main.js', other.env);
      await restarted.stop();
      const left = await odb.db.selectFrom('apis').select('slug').orderBy('slug').execute();
      expect(left.map((a) => a.slug)).toEqual(['still-live']);
      const rows = await odb.db.selectFrom('endpoints').select('api_id').execute();
      expect(rows.map((e) => e.api_id)).toEqual([live.apiId]);
      expect(await deferredListings(odb)).toBe(0);
    } finally {
      await odb.close();
      await other.stop();
    }
  });
});
