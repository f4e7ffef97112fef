import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandSchemaRefs, unresolvedSchemaRefs } from '../../../core/schema-refs.js';
import type { DbHandles } from '../../../core/db/database.js';
import {
  createLiveListing,
  holdDocument,
  serveDocuments,
  smallOpenApi,
  type LocalServer,
} from '../../helpers/catalog.js';
import { openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';

let h: ControlHarness;
let db: DbHandles;
let docs: LocalServer;
let org: SeededOrg;

const recursive = {
  openapi: '3.0.3',
  info: { title: 'Org Chart', version: '1' },
  paths: {
    '/people/{id}': {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Person' } } },
          },
        },
      },
    },
  },
  components: {
    schemas: {
      Person: {
        type: 'object',
        properties: {
          name: { $ref: '#/components/schemas/Name' },
          manager: { $ref: '#/components/schemas/Person' },
          reports: { type: 'array', items: { $ref: '#/components/schemas/Person' } },
        },
      },
      Name: { type: 'string', minLength: 1 },
    },
  },
};

beforeAll(async () => {
  h = await startControl();
  db = openTestDb(h.dataDir);
  org = await seedOrg(db);
  docs = await serveDocuments({
    '/specs/relative.json': smallOpenApi('Relative Server', {
      servers: [{ url: 'http://insecure.example.com/v1' }, { url: '/api/v2' }],
    }),
  });
});
afterAll(async () => {
  await docs.close();
  await db.close();
  await h.stop();
});

describe('imports keep every schema', () => {
  it('serves a recursive schema as a named component every reader resolves', async () => {
    const live = await createLiveListing(h.control.url, org.key, {
      openapiBody: recursive,
      baseUrl: 'https://people.example.com',
    });
    const view = await call(h.control.url, 'GET', `/v1/apis/${live.slug}/schema`, { token: org.key });
    expect(view.status).toBe(200);
    const components = view.body.components.schemas as Record<string, unknown>;
    expect(view.body.endpoints[0].response.schema).toEqual({ $ref: '#/components/schemas/Person' });
    expect(components.Person).toMatchObject({ properties: { name: { $ref: '#/components/schemas/Name' } } });
    expect(unresolvedSchemaRefs(view.body, components)).toEqual([]);
    const expanded = expandSchemaRefs(view.body.endpoints[0].response.schema, components) as {
      properties: { name: unknown; manager: unknown };
    };
    expect(expanded.properties.name).toEqual({ type: 'string', minLength: 1 });
    expect(expanded.properties.manager).toEqual({ $ref: '#/components/schemas/Person' });
    // Endpoint paths are indexed for search once per import (the per-row triggers are deferred meanwhile).
    const found = await call(h.control.url, 'GET', '/v1/catalog/search?query=people', { token: org.key });
    expect(found.body.data.map((l: { slug: string }) => l.slug)).toContain(live.slug);
    const exported = await call(h.control.url, 'GET', `/v1/apis/${live.slug}/openapi`, { token: org.key });
    expect(exported.body.components.schemas.Person).toEqual(recursive.components.schemas.Person);
  });

  it('turns Swagger 2 formData into a multipart request schema', async () => {
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: {
        body: {
          swagger: '2.0',
          info: { title: 'Uploads', version: '1' },
          host: 'files.example.com',
          paths: {
            '/files': {
              post: {
                consumes: ['multipart/form-data'],
                parameters: [
                  { name: 'file', in: 'formData', type: 'file', required: true },
                  { name: 'note', in: 'formData', type: 'string' },
                ],
                responses: { '201': { description: 'stored' } },
              },
            },
          },
        },
      },
    });
    expect(r.status).toBe(201);
    const row = await db.db
      .selectFrom('endpoints')
      .select('request_schema_json')
      .where('api_id', '=', r.body.api_id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.request_schema_json!)).toEqual({
      content_type: 'multipart/form-data',
      required: true,
      schema: {
        type: 'object',
        properties: { file: { type: 'string', format: 'binary' }, note: { type: 'string' } },
        required: ['file'],
      },
    });
  });
});

describe('imported metadata', () => {
  it('prefers https and resolves relative server URLs against the document URL', async () => {
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { openapi_url: `${docs.url}/specs/relative.json` },
    });
    expect(r.status).toBe(201);
    expect(r.body.base_url).toBe('http://insecure.example.com/v1');
    expect(r.body.import_report.base_url_candidates).toEqual(['http://insecure.example.com/v1', `${docs.url}/api/v2`]);
    const https = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: {
        body: smallOpenApi('Two Servers', {
          servers: [{ url: 'http://two.example.com' }, { url: 'https://two.example.com' }],
        }),
      },
    });
    expect(https.body.base_url).toBe('https://two.example.com');
  });

  it('names a generic title after its provider, maps the category, and uses `name` for an empty title', async () => {
    const generic = (title: string) =>
      smallOpenApi(title, {
        info: {
          title,
          version: '2021-01-01',
          description: '<p>Manage <b>SQL</b> servers.</p>',
          'x-providerName': 'azure.com',
          'x-serviceName': 'sql-servers',
          'x-apisguru-categories': ['cloud'],
        },
      });
    const a = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: generic('SqlManagementClient') },
    });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({
      slug: 'azure-sqlmanagementclient',
      category: 'cloud',
      summary: 'Manage SQL servers.',
    });
    const b = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: generic('SqlManagementClient') },
    });
    expect(b.body.slug).toBe('azure-sqlmanagementclient-sql-servers');
    const untitled = generic('');
    const refused = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: untitled },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'import_failed', at: '/info/title' });
    const named = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: untitled, name: 'Azure SQL' },
    });
    expect(named.status).toBe(201);
    expect(named.body).toMatchObject({ name: 'Azure SQL', slug: 'azure-sql' });
  });
});

describe('import concurrency', () => {
  it('answers 503 busy with Retry-After while the pool is full, and the held import still lands', async () => {
    const busy = await startControl({ SVC_IMPORT_WORKERS: '1', SVC_IMPORT_QUEUE: '0' });
    const bdb = openTestDb(busy.dataDir);
    const owner = await seedOrg(bdb);
    const held = await holdDocument();
    try {
      const url = `${held.url}/doc.json`;
      const first = call(busy.control.url, 'POST', '/v1/provider/apis', {
        token: owner.key,
        body: { openapi_url: url },
      });
      await held.arrived;
      const refused = await call(busy.control.url, 'POST', '/v1/provider/apis', {
        token: owner.key,
        body: { body: smallOpenApi('Second') },
      });
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('busy');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const me = await call(busy.control.url, 'GET', '/v1/me', { token: owner.key });
      expect(me.status).toBe(200);
      held.release(smallOpenApi('Held'));
      expect((await first).status).toBe(201);
    } finally {
      await held.close();
      await bdb.close();
      await busy.stop();
    }
  });
});
