import { describe, expect, it } from 'vitest';
import { importOpenApi, parseDocumentText } from '../../../control/catalog/openapi-import.js';
import { boundedJson } from '../../../control/catalog/bounded-json.js';
import { fixture } from '../../helpers/catalog.js';

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
    ['a relative server URL gives no base URL', minimal({ servers: [{ url: '/api' }] }), null],
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
    ['missing title', { openapi: '3.0.0', info: { version: '1' }, paths: { '/a': { get: {} } } }],
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

describe('boundedJson', () => {
  it('matches JSON.stringify within budget and marks cycles', () => {
    const v = { a: [1, 'x', null, { b: true }] };
    expect(boundedJson(v, 1000)).toBe(JSON.stringify(v));
    const cyc: Record<string, unknown> = { n: 1 };
    cyc.self = cyc;
    expect(boundedJson(cyc, 1000)).toBe('{"n":1,"self":{"$comment":"circular"}}');
    expect(() => boundedJson({ s: 'x'.repeat(100) }, 50)).toThrow(/more than 50/);
  });
});
