/**
 * The console's generated form (control/console/console-form.ts): fields per parameter with the schema's example,
 * a body sample built from the body schema (component references resolved), reserved headers left out, and path
 * template names without a declared parameter still asked for.
 */
import { describe, expect, it } from 'vitest';
import { consoleForms, isReservedHeader, sampleOf } from '../../../control/console/console-form.js';
import type { ListingSchemaView } from '../../../core/schemas/catalog.schemas.js';

function view(endpoint: Partial<ListingSchemaView['endpoints'][number]>, components = {}): ListingSchemaView {
  return {
    slug: 's',
    components: { schemas: components },
    endpoints: [
      {
        endpoint_id: 'ep_1',
        method: 'GET',
        path: '/x',
        operation_id: null,
        summary: '',
        description: '',
        parameters: [],
        request: null,
        response: null,
        price_cents: 0,
        discounts: [],
        pending_price: null,
        ...endpoint,
      },
    ],
  };
}

describe('console form', () => {
  it('makes one field per path, query and header parameter, prefilled from example, default or enum', () => {
    const [f] = consoleForms(
      view({
        path: '/cities/{city}/days/{n}',
        parameters: [
          { name: 'city', in: 'path', required: true, schema: { type: 'string', example: 'lisbon' } },
          { name: 'units', in: 'query', required: false, schema: { type: 'string', enum: ['metric', 'imperial'] } },
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', default: 10 } },
          { name: 'X-Trace', in: 'header', required: false, schema: { type: 'string' } },
          { name: 'Authorization', in: 'header', required: true, schema: { type: 'string' } },
          { name: 'sid', in: 'cookie', required: false, schema: { type: 'string' } },
        ],
      }),
    );
    expect(f?.fields.map((x) => [x.in, x.name, x.required, x.example, x.choices])).toEqual([
      ['path', 'n', true, '', null], // in the template, not declared: still asked for
      ['path', 'city', true, 'lisbon', null],
      ['query', 'units', false, 'metric', ['metric', 'imperial']],
      ['query', 'limit', false, '10', null],
      ['header', 'X-Trace', false, '', null],
    ]);
  });

  it('builds the body example from the schema, resolving component references', () => {
    const [f] = consoleForms(
      view(
        {
          method: 'POST',
          request: {
            content_type: 'application/json',
            required: true,
            schema: { $ref: '#/components/schemas/Order' },
          },
        },
        {
          Order: {
            type: 'object',
            properties: {
              item: { type: 'string', example: 'lamp' },
              qty: { type: 'integer' },
              tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
              gift: { type: 'boolean' },
            },
          },
        },
      ),
    );
    expect(f?.body?.isJson).toBe(true);
    expect(JSON.parse(f?.body?.example ?? '')).toEqual({ item: 'lamp', qty: 0, tags: ['a'], gift: false });
  });

  it('prefers a schema-level example and stops on deep or recursive shapes', () => {
    expect(sampleOf({ type: 'object', example: { a: 1 }, properties: { b: { type: 'string' } } })).toEqual({ a: 1 });
    const deep: Record<string, unknown> = { type: 'object', properties: {} };
    let cur = deep;
    for (let i = 0; i < 20; i++) {
      const next = { type: 'object', properties: {} };
      (cur.properties as Record<string, unknown>).n = next;
      cur = next;
    }
    expect(JSON.stringify(sampleOf(deep)).length).toBeLessThan(200);
  });

  it('reserves the credential and gateway headers', () => {
    for (const h of [
      'authorization',
      'X-Svc-Key',
      'x-svc-max-price-cents',
      'Idempotency-Key',
      'Cookie',
      'content-type',
    ])
      expect(isReservedHeader(h)).toBe(true);
    expect(isReservedHeader('X-Trace')).toBe(false);
  });
});
