import { describe, expect, it } from 'vitest';
import { consumerOpenApi } from '../../../control/catalog/inspect.service.js';

const UPSTREAM = 'https://upstream.internal.example';

const doc = {
  openapi: '3.0.3',
  servers: [{ url: UPSTREAM }],
  paths: {
    '/pets': {
      servers: [{ url: `${UPSTREAM}/p` }],
      get: {
        servers: [{ url: `${UPSTREAM}/op` }],
        responses: {
          '200': {
            description: 'ok',
            links: { next: { operationId: 'getPet', server: { url: `${UPSTREAM}/link` } } },
            content: {
              'application/json': {
                schema: { type: 'object', properties: { servers: { type: 'array' }, server: { type: 'string' } } },
              },
            },
          },
        },
        callbacks: {
          onEvent: { '{$request.body#/cb}': { servers: [{ url: `${UPSTREAM}/cb` }], post: { responses: {} } } },
        },
      },
    },
  },
  components: {
    links: { self: { operationId: 'getPet', server: { url: `${UPSTREAM}/component-link` } } },
    responses: { Page: { description: 'x', links: { more: { operationRef: '#/x', server: { url: UPSTREAM } } } } },
  },
};

describe('consumerOpenApi', () => {
  const out = consumerOpenApi(JSON.stringify(doc), 'http://127.0.0.1:4001/', 'pets');

  it('names only the gateway: no server, path, operation, callback or link server keeps the upstream origin', () => {
    expect(out.servers).toEqual([{ url: 'http://127.0.0.1:4001/pets', description: 'svc gateway' }]);
    expect(JSON.stringify(out)).not.toContain('upstream.internal');
  });

  it('keeps the links themselves and schema properties that happen to be called servers/server', () => {
    const json = JSON.stringify(out);
    expect(json).toContain('"next":{"operationId":"getPet"}');
    expect(json).toContain('"properties":{"servers":{"type":"array"},"server":{"type":"string"}}');
    expect(json).toContain('"self":{"operationId":"getPet"}');
  });
});
