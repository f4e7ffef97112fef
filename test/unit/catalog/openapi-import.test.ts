import { describe, expect, it } from 'vitest';
import { importOpenApi, parseDocumentText } from '../../../control/catalog/openapi-import.js';
import { fixture } from '../../helpers/catalog.js';
import { expandSchemaRefs, resolveSchemaRef, unresolvedSchemaRefs } from '../../../core/schema-refs.js';

const minimal = (extra: Record<string, unknown>) => ({
  openapi: '3.0.0',
  info: { title: 'T', version: '1' },
  paths: { '/a': { get: { responses: { '200': { description: 'ok' } } } } },
  ...extra,
});

describe('importOpenApi', () => {
  it.each([
    [
      'server variables take their defaults',
      minimal({
        servers: [
          { url: '{scheme}://api.example.com/{v}', variables: { scheme: { default: 'https' }, v: { default: 'v2' } } },
        ],
      }),
      'https://api.example.com/v2',
    ],
    ['a relative server URL without a document URL gives no base URL', minimal({ servers: [{ url: '/api' }] }), null],
    [
      'an https server wins over an http one listed first',
      minimal({ servers: [{ url: 'http://api.example.com/v1' }, { url: 'https://api.example.com/v1' }] }),
      'https://api.example.com/v1',
    ],
    ['no servers gives no base URL', minimal({}), null],
    [
      'Swagger 2 prefers https',
      {
        swagger: '2.0',
        info: { title: 'T', version: '1' },
        host: 'h.example',
        basePath: '/b/',
        schemes: ['http', 'https'],
        paths: { '/a': { get: { responses: { '200': { description: 'ok' } } } } },
      },
      'https://h.example/b',
    ],
  ])('%s', async (_n, doc, base) => {
    expect((await importOpenApi(doc as Record<string, unknown>)).baseUrl).toBe(base);
  });

  it('merges path-level and operation-level parameters, path params are required', async () => {
    const doc = minimal({
      paths: {
        '/u/{id}': {
          parameters: [
            { name: 'id', in: 'path', schema: { type: 'string' } },
            { name: 'v', in: 'query', schema: { type: 'string' } },
          ],
          get: {
            parameters: [{ name: 'v', in: 'query', required: true, schema: { type: 'integer' } }],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    });
    const api = await importOpenApi(doc);
    const params = JSON.parse(api.endpoints[0]!.parametersJson) as {
      name: string;
      required: boolean;
      schema: { type: string };
    }[];
    expect(params).toEqual([
      expect.objectContaining({ name: 'id', required: true }),
      expect.objectContaining({ name: 'v', required: true, schema: { type: 'integer' } }),
    ]);
  });

  it('reads every operation of the vendored fixtures', async () => {
    expect((await importOpenApi(fixture('uspto-v3.json'))).endpoints.map((e) => `${e.method} ${e.path}`)).toEqual([
      'GET /',
      'GET /{dataset}/{version}/fields',
      'POST /{dataset}/{version}/records',
    ]);
    const v2 = await importOpenApi(fixture('petstore-v2.json'));
    expect(JSON.parse(v2.endpoints[0]!.responseSchemaJson!).schema.items.properties.name.type).toBe('string');
  });

  it.each([
    ['OpenAPI 2.5', { openapi: '2.5.0', info: { title: 'x', version: '1' }, paths: {} }],
    ['no operations', { openapi: '3.0.0', info: { title: 'x', version: '1' }, paths: { '/a': {} } }],
    ['paths not an object', { openapi: '3.0.0', info: { title: 'x', version: '1' }, paths: [] }],
  ])('refuses %s', async (_n, doc) => {
    await expect(importOpenApi(doc as Record<string, unknown>)).rejects.toMatchObject({ code: 'import_failed' });
  });
});

describe('parseDocumentText', () => {
  it('refuses a YAML alias bomb', () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 12; i++)
      lines.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill('*' + String.fromCharCode(96 + i))
          .join(',')}]`,
      );
    expect(() => parseDocumentText(lines.join('\n'))).toThrow();
  });
  it('refuses a scalar document', () => {
    expect(() => parseDocumentText('42')).toThrow(/object/);
  });
});

const withSchemas = (schema: unknown, schemas: Record<string, unknown>) =>
  minimal({
    paths: {
      '/x': {
        get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema } } } } },
      },
    },
    components: { schemas },
  });
const responseOf = (api: { endpoints: { responseSchemaJson: string | null }[] }) =>
  JSON.parse(api.endpoints[0]!.responseSchemaJson!).schema as Record<string, unknown>;

describe('schemas without loss', () => {
  it('keeps a recursive schema as a named component that resolves, and inlines the rest', async () => {
    const api = await importOpenApi(
      withSchemas(
        { $ref: '#/components/schemas/Tree' },
        {
          Tree: {
            type: 'object',
            properties: {
              label: { $ref: '#/components/schemas/Label' },
              kids: { type: 'array', items: { $ref: '#/components/schemas/Tree' } },
            },
          },
          Label: { type: 'string', maxLength: 10 },
        },
      ),
    );
    expect(responseOf(api)).toEqual({ $ref: '#/components/schemas/Tree' });
    expect(api.components.Tree).toMatchObject({
      properties: { kids: { items: { $ref: '#/components/schemas/Tree' } } },
    });
    expect(unresolvedSchemaRefs([responseOf(api), api.components], api.components)).toEqual([]);
    const expanded = expandSchemaRefs(responseOf(api), api.components) as { properties: { kids: { items: unknown } } };
    expect(expanded.properties.kids.items).toEqual({ $ref: '#/components/schemas/Tree' });
    expect(resolveSchemaRef(api.components, '#/components/schemas/Label')).toEqual({ type: 'string', maxLength: 10 });
  });

  it('imports an exponential $ref expansion in reference form instead of refusing it', async () => {
    const schemas: Record<string, unknown> = { L0: { type: 'string' } };
    for (let i = 1; i <= 40; i++)
      schemas[`L${i}`] = {
        type: 'object',
        properties: { a: { $ref: `#/components/schemas/L${i - 1}` }, b: { $ref: `#/components/schemas/L${i - 1}` } },
      };
    const api = await importOpenApi(withSchemas({ $ref: '#/components/schemas/L40' }, schemas));
    expect(Object.keys(api.components)).toHaveLength(41);
    expect(unresolvedSchemaRefs([responseOf(api), api.components], api.components)).toEqual([]);
    expect(api.report).toMatchObject({ operations_found: 1, endpoints_imported: 1, truncated_schemas: 0 });
  });

  it('truncates a schema too large to store, with a marker and a warning naming where', async () => {
    const huge = { type: 'string', enum: Array.from({ length: 40_000 }, (_, i) => `value-number-${i}`) };
    const api = await importOpenApi(withSchemas(huge, {}));
    expect(responseOf(api)).toMatchObject({ 'x-svc-truncated': true, type: 'string' });
    expect(api.report.truncated_schemas).toBe(1);
    expect(api.warnings[0]).toMatch(/paths\.\/x\.get\.responses\.200: schema truncated/);
  });

  it('marks a $ref it cannot resolve instead of storing it', async () => {
    const api = await importOpenApi(withSchemas({ $ref: 'https://elsewhere.example/s.json#/Pet' }, {}));
    expect(responseOf(api)).toMatchObject({ 'x-svc-unresolved-ref': 'https://elsewhere.example/s.json#/Pet' });
    expect(api.warnings[0]).toMatch(/does not resolve/);
  });

  it.each([
    ['a file upload', [{ name: 'file', in: 'formData', type: 'file', required: true }], 'multipart/form-data'],
    ['plain form fields', [{ name: 'q', in: 'formData', type: 'string' }], 'application/x-www-form-urlencoded'],
  ])('turns Swagger 2 formData (%s) into a request schema', async (_n, parameters, contentType) => {
    const api = await importOpenApi({
      swagger: '2.0',
      info: { title: 'Forms', version: '1' },
      paths: { '/upload': { post: { parameters, responses: { '200': { description: 'ok' } } } } },
    });
    const req = JSON.parse(api.endpoints[0]!.requestSchemaJson!);
    expect(req.content_type).toBe(contentType);
    expect(Object.keys(req.schema.properties)).toEqual([parameters[0]!.name]);
    if (contentType === 'multipart/form-data')
      expect(req.schema).toMatchObject({
        required: ['file'],
        properties: { file: { type: 'string', format: 'binary' } },
      });
  });
});

describe('metadata and limits', () => {
  it('resolves a relative server URL against the document URL', async () => {
    const api = await importOpenApi(minimal({ servers: [{ url: '/api/v2' }] }), {
      documentUrl: 'https://docs.example.com/specs/openapi.json',
    });
    expect(api.baseUrl).toBe('https://docs.example.com/api/v2');
  });

  it('maps x-apisguru-categories (or tags) onto the marketplace list and strips HTML from summaries', async () => {
    const guru = await importOpenApi(
      minimal({ info: { title: 'T', version: '1', 'x-apisguru-categories': ['financial'] } }),
    );
    expect(guru.category).toBe('finance');
    const tagged = await importOpenApi(
      minimal({
        tags: [{ name: 'Weather' }],
        paths: { '/a': { get: { summary: '<b>Get</b> the &amp; <i>thing</i>', responses: {} } } },
      }),
    );
    expect(tagged.category).toBe('weather');
    expect(tagged.endpoints[0]!.summary).toBe('Get the & thing');
    expect((await importOpenApi(minimal({}))).category).toBe('other');
  });

  it('skips an operation over a per-operation limit with a warning, keeping the others', async () => {
    const many = Array.from({ length: 301 }, (_, i) => ({ name: `p${i}`, in: 'query', schema: { type: 'string' } }));
    const api = await importOpenApi(
      minimal({
        paths: {
          '/wide': { get: { parameters: many, responses: {} } },
          '/ok': { get: { responses: {} } },
        },
      }),
    );
    expect(api.endpoints.map((e) => e.path)).toEqual(['/ok']);
    expect(api.report).toMatchObject({ operations_found: 2, endpoints_imported: 1, skipped_operations: 1 });
    expect(api.warnings[0]).toMatch(/paths\.\/wide\.get: 301 parameters, over 300; skipped/);
  });

  it('refuses an oversized direct body naming the limit and pointing at openapi_url', () => {
    const text = JSON.stringify(minimal({ info: { title: 'T', version: '1', description: 'x'.repeat(100) } }));
    try {
      parseDocumentText(text, 50);
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: 'payload_too_large', extra: { limit: 'document_bytes', max: 50 } });
      expect((e as Error).message).toMatch(/by openapi_url/);
    }
  });
});
