import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { fixture, serveDocuments, smallOpenApi, type LocalServer } from '../../helpers/catalog.js';
import type { DbHandles } from '../../../core/db/database.js';

let h: ControlHarness;
let db: DbHandles;
let docs: LocalServer;
let org: SeededOrg;
let routes: Record<string, string | object>;

const yamlDoc = `openapi: 3.1.0
info:
  title: Yaml Weather
  version: 1.0.0
servers:
  - url: https://weather.example.com/v2
paths:
  /forecast:
    get:
      summary: Forecast
      parameters:
        - name: city
          in: query
          required: true
          schema: { type: string }
      responses:
        '200': { description: ok }
`;

beforeAll(async () => {
  h = await startControl();
  db = openTestDb(h.dataDir);
  org = await seedOrg(db);
  routes = {
    '/petstore-expanded.json': fixture('petstore-expanded-v3.json'),
    '/uspto-export.json': { openapi_spec: fixture('uspto-v3.json') },
    '/weather.yaml': yamlDoc,
    '/not-openapi.json': { hello: 'world' },
    '/evolving.json': smallOpenApi('Evolving API'),
  };
  docs = await serveDocuments(routes);
});
afterAll(async () => {
  await docs.close();
  await db.close();
  await h.stop();
});

async function apiCount(): Promise<number> {
  const r = await db.db.selectFrom('apis').select(db.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(r.n);
}

describe('provider listing import', () => {
  it('imports an OpenAPI 3.0 URL with dereferenced schemas and a draft listing', async () => {
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { openapi_url: `${docs.url}/petstore-expanded.json` },
    });
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('draft');
    expect(r.body.name).toBe('Swagger Petstore');
    expect(r.body.base_url).toBe('http://petstore.swagger.io/api');
    expect(r.body.source).toEqual({ kind: 'openapi_url', url: `${docs.url}/petstore-expanded.json` });
    const eps = (r.body.endpoints as { method: string; path: string; endpoint_id: string }[]).map(
      (e) => `${e.method} ${e.path}`,
    );
    expect(eps).toEqual(['GET /pets', 'POST /pets', 'GET /pets/{id}', 'DELETE /pets/{id}']);
    const row = await db.db
      .selectFrom('endpoints')
      .selectAll()
      .where('api_id', '=', r.body.api_id)
      .where('method', '=', 'POST')
      .executeTakeFirstOrThrow();
    // NewPet was a $ref: stored dereferenced
    expect(JSON.parse(row.request_schema_json!).schema.properties.name.type).toBe('string');
  });

  it('imports a Swagger 2.0 body (the canonical petstore) with a validation warning', async () => {
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: fixture('petstore-v2.json'), slug: 'petstore-two' },
    });
    expect(r.status).toBe(201);
    expect(r.body.slug).toBe('petstore-two');
    expect(r.body.base_url).toBe('http://petstore.swagger.io/v1');
    expect(r.body.endpoints).toHaveLength(3);
    expect(r.body.warnings[0]).toMatch(/schema validation/);
  });

  it('imports YAML and a wrapped marketplace export', async () => {
    const y = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { openapi_url: `${docs.url}/weather.yaml` },
    });
    expect(y.status).toBe(201);
    expect(y.body.endpoints[0]).toMatchObject({ method: 'GET', path: '/forecast', price_cents: 0 });
    const m = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { rapidapi_url: `${docs.url}/uspto-export.json` },
    });
    expect(m.status).toBe(201);
    expect(m.body.source.kind).toBe('rapidapi_url');
    expect(m.body.base_url).toBe('https://developer.uspto.gov/ds-api');
    expect(m.body.endpoints).toHaveLength(3);
  });

  it('re-import keeps endpoint ids and prices, soft-removes vanished endpoints', async () => {
    const c = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: smallOpenApi('Reimport API') },
    });
    expect(c.status).toBe(201);
    const ping = c.body.endpoints.find((e: { path: string }) => e.path === '/ping');
    const post = c.body.endpoints.find((e: { method: string }) => e.method === 'POST');
    const p = await call(h.control.url, 'PUT', `/v1/provider/apis/${c.body.api_id}/pricing`, {
      token: org.key,
      body: { endpoints: [{ endpoint_id: ping.endpoint_id, price_cents: 7 }] },
    });
    expect(p.status).toBe(200);
    const next = smallOpenApi('Reimport API') as { paths: Record<string, unknown> };
    delete next.paths['/items'];
    next.paths['/status'] = { get: { responses: { '200': { description: 'ok' } } } };
    const r = await call(h.control.url, 'POST', `/v1/provider/apis/${c.body.api_id}/import`, {
      token: org.key,
      body: { body: next },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ added: 1, removed: 1 });
    const again = r.body.endpoints.find((e: { path: string }) => e.path === '/ping');
    expect(again).toMatchObject({ endpoint_id: ping.endpoint_id, price_cents: 7 });
    expect(r.body.endpoints.find((e: { endpoint_id: string }) => e.endpoint_id === post.endpoint_id)).toBeUndefined();
    const removed = await db.db
      .selectFrom('endpoints')
      .select('removed_at')
      .where('id', '=', post.endpoint_id)
      .executeTakeFirstOrThrow();
    expect(removed.removed_at).not.toBeNull();
  });

  it('re-import with an empty body re-fetches the stored URL; a bad new version changes nothing', async () => {
    const c = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { openapi_url: `${docs.url}/evolving.json` },
    });
    expect(c.status).toBe(201);
    const next = smallOpenApi('Evolving API') as { paths: Record<string, unknown> };
    next.paths['/extra'] = { get: { responses: { '200': { description: 'ok' } } } };
    routes['/evolving.json'] = next;
    const r = await call(h.control.url, 'POST', `/v1/provider/apis/${c.body.api_id}/import`, {
      token: org.key,
      body: {},
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ added: 1, removed: 0 });
    routes['/evolving.json'] = { hello: 'broken' };
    const bad = await call(h.control.url, 'POST', `/v1/provider/apis/${c.body.api_id}/import`, {
      token: org.key,
      body: {},
    });
    expect(bad.status).toBe(422);
    const eps = await db.db
      .selectFrom('endpoints')
      .select('path')
      .where('api_id', '=', c.body.api_id)
      .where('removed_at', 'is', null)
      .execute();
    expect(eps).toHaveLength(4);
  });

  it.each([
    ['a non-OpenAPI document', { body: { hello: 'world' } }, 422, 'import_failed'],
    [
      'a document without operations',
      { body: { openapi: '3.0.0', info: { title: 'x', version: '1' }, paths: {} } },
      422,
      'import_failed',
    ],
    ['invalid JSON text', { body: '{"openapi": "3.0.0", ' }, 422, 'import_failed'],
    ['a URL serving a non-OpenAPI document', { openapi_url: 'DOCS/not-openapi.json' }, 422, 'import_failed'],
    ['a URL that 404s', { openapi_url: 'DOCS/missing.json' }, 422, 'import_failed'],
    ['a file: URL', { openapi_url: 'file:///etc/passwd' }, 400, 'url_not_allowed'],
    ['two sources at once', { body: smallOpenApi(), openapi_url: 'DOCS/weather.yaml' }, 400, 'validation_failed'],
    ['no source', { name: 'nothing' }, 400, 'validation_failed'],
  ])('refuses %s and creates nothing', async (_name, body, status, code) => {
    const before = await apiCount();
    const b = JSON.parse(JSON.stringify(body).replaceAll('DOCS', docs.url));
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', { token: org.key, body: b });
    expect(r.status).toBe(status);
    expect(r.body.code).toBe(code);
    expect(await apiCount()).toBe(before);
  });

  it('refuses an exponential $ref expansion, and imports a plain $ref cycle', async () => {
    const schemas: Record<string, unknown> = { L0: { type: 'string' } };
    for (let i = 1; i <= 30; i++)
      schemas[`L${i}`] = {
        type: 'object',
        properties: { a: { $ref: `#/components/schemas/L${i - 1}` }, b: { $ref: `#/components/schemas/L${i - 1}` } },
      };
    const bomb = {
      openapi: '3.0.0',
      info: { title: 'bomb', version: '1' },
      paths: {
        '/x': {
          get: {
            responses: {
              '200': {
                description: 'x',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/L30' } } },
              },
            },
          },
        },
      },
      components: { schemas },
    };
    const before = await apiCount();
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', { token: org.key, body: { body: bomb } });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('import_failed');
    expect(await apiCount()).toBe(before);

    const cyc = {
      openapi: '3.0.0',
      info: { title: 'cyc', version: '1' },
      paths: {
        '/tree': {
          get: {
            responses: {
              '200': {
                description: 'x',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } },
              },
            },
          },
        },
      },
      components: {
        schemas: { Node: { type: 'object', properties: { child: { $ref: '#/components/schemas/Node' } } } },
      },
    };
    const ok = await call(h.control.url, 'POST', '/v1/provider/apis', { token: org.key, body: { body: cyc } });
    expect(ok.status).toBe(201);
  });

  it('refuses a document over the size cap', async () => {
    const big = smallOpenApi('Big', { info: { title: 'Big', version: '1', description: 'x'.repeat(2_200_000) } });
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', { token: org.key, body: { body: big } });
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('payload_too_large');
  });

  it('lists, gets and patches listings; other orgs see not_found', async () => {
    const c = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: smallOpenApi('Patch Me') },
    });
    const id = c.body.api_id as string;
    const p = await call(h.control.url, 'PATCH', `/v1/provider/apis/${id}`, {
      token: org.session,
      body: { summary: 'Short', category: 'Data Tools', tags: ['a', 'b'], base_url: 'http://127.0.0.1:9/' },
    });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({
      summary: 'Short',
      category: 'data-tools',
      tags: ['a', 'b'],
      base_url: 'http://127.0.0.1:9',
    });
    const list = await call(h.control.url, 'GET', '/v1/provider/apis', { token: org.key });
    expect(
      list.body.data.some((a: { api_id: string; endpoint_count: number }) => a.api_id === id && a.endpoint_count === 3),
    ).toBe(true);
    const other = await seedOrg(db);
    const g = await call(h.control.url, 'GET', `/v1/provider/apis/${id}`, { token: other.key });
    expect(g.status).toBe(404);
    const bad = await call(h.control.url, 'PATCH', `/v1/provider/apis/${id}`, { token: org.key, body: { price: 3 } });
    expect(bad.body.code).toBe('validation_failed');
  });

  it('needs provider:write', async () => {
    const bare = await seedOrg(db, { scopes: ['catalog:read', 'proxy:call', 'keys:write', 'usage:read'] });
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: bare.key,
      body: { body: smallOpenApi() },
    });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('insufficient_scope');
    const none = await call(h.control.url, 'GET', '/v1/provider/apis');
    expect(none.status).toBe(401);
  });
});
