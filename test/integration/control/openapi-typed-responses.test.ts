/**
 * Every JSON answer in the OpenAPI document has a real schema (named properties), not an untyped record: the
 * document is what MCP, the CLI and client generators read, and the services return the same z.infer<> types.
 * Walks the generated document, so a new route is held to this the moment it is added.
 */
import { beforeAll, expect, it } from 'vitest';
import { useInProcessControl } from '../../helpers/in-process.js';

const control = useInProcessControl();

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, unknown>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
interface Doc {
  paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }>
  >;
  components?: { schemas?: Record<string, Schema> };
}

let doc: Doc;
beforeAll(async () => {
  doc = (await control().call('GET', '/v1/openapi.json')).body as unknown as Doc;
});

function resolve(s: Schema | undefined): Schema | undefined {
  if (!s?.$ref) return s;
  const name = s.$ref.replace('#/components/schemas/', '');
  return resolve(doc.components?.schemas?.[name]);
}

/** Typed: an object with named properties, an array of typed items, a union of typed parts, or a scalar. */
function typed(raw: Schema | undefined): boolean {
  const s = resolve(raw);
  if (!s) return false;
  const parts = s.allOf ?? s.anyOf ?? s.oneOf;
  if (parts) return parts.length > 0 && parts.every(typed);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length === 0) return false;
  if (types.includes('object')) return Object.keys(s.properties ?? {}).length > 0;
  if (types.includes('array')) return typed(s.items);
  return true;
}

function untypedResponses(): string[] {
  const bad: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, res] of Object.entries(op.responses ?? {})) {
        const json = res.content?.['application/json'];
        if (!json) continue;
        const name = `${method.toUpperCase()} ${path} ${status}`;
        if (!typed(json.schema)) bad.push(name);
      }
    }
  }
  return bad;
}

it('every JSON response of every route has a typed schema, none an untyped record', () => {
  expect(Object.keys(doc.paths).length).toBeGreaterThan(40);
  expect(untypedResponses()).toEqual([]);
});

it('the check itself catches an untyped record (z.record(z.string(), z.unknown()))', () => {
  expect(typed({ type: 'object' })).toBe(false);
  expect(typed({ type: 'array', items: { type: 'object' } })).toBe(false);
  expect(typed({ type: 'object', properties: { slug: { type: 'string' } } })).toBe(true);
});

it('the listing views are named components that read well in the document', () => {
  const names = Object.keys(doc.components?.schemas ?? {});
  for (const n of [
    'ListingSummary',
    'ListingDetail',
    'ProviderApiDetail',
    'ImportedApi',
    'UsageSummary',
    'Me',
    'TermsDocument',
  ])
    expect(names).toContain(n);
  for (const n of ['CatalogJson', 'ProviderProfileJson', 'ProviderJson', 'TermsJson', 'MarketJson'])
    expect(names).not.toContain(n);
});
