/**
 * The console's form, generated from an endpoint's stored schema (control/catalog/inspect.service.ts `listingSchema`):
 * one field per path, query and header parameter, prefilled with the schema's example (or default, or first enum
 * value), and a request body prefilled with the body schema's example or, without one, a sample built from its
 * properties. Pure functions: no database, no credential.
 */
import { expandSchemaRefs, type SchemaComponents } from '../../core/schema-refs.js';
import type { ListingSchemaView } from '../../core/schemas/catalog.schemas.js';
import { isJsonObject, type JsonObject } from '../../core/json-object.js';

export type ParamLocation = 'path' | 'query' | 'header';

export interface ConsoleField {
  in: ParamLocation;
  name: string;
  required: boolean;
  description: string;
  /** JSON-schema type of the value, for the hint ("integer", "string", ...). */
  type: string;
  /** Allowed values (a select), when the schema lists them. */
  choices: string[] | null;
  example: string;
}

export interface ConsoleBody {
  contentType: string;
  required: boolean;
  /** The example shown in the body field: pretty JSON for a JSON body, text otherwise. */
  example: string;
  isJson: boolean;
}

export interface ConsoleEndpointForm {
  endpointId: string;
  method: string;
  path: string;
  summary: string | null;
  priceCents: number;
  fields: ConsoleField[];
  body: ConsoleBody | null;
}

/**
 * Headers a form may not set: the credential and the headers the gateway or the hop owns. An endpoint that declares
 * one as a parameter gets no field for it.
 */
const RESERVED_HEADERS = new Set([
  'authorization',
  'cookie',
  'host',
  'content-type',
  'content-length',
  'idempotency-key',
  'x-svc-key',
  'x-svc-max-price-cents',
  'connection',
  'transfer-encoding',
]);

export function isReservedHeader(name: string): boolean {
  const n = name.toLowerCase();
  return RESERVED_HEADERS.has(n) || n.startsWith('x-svc-');
}

const text = (v: unknown): string =>
  v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);

/** The schema's own example: `example`, then the first of `examples`, then `default`, then the first enum value. */
function exampleOf(schema: JsonObject): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  return undefined;
}

/** A value shaped like `schema`: its example where it has one, else built from properties/items; bounded depth. */
export function sampleOf(schema: unknown, depth = 0): unknown {
  if (!isJsonObject(schema) || depth > 6) return null;
  const own = exampleOf(schema);
  if (own !== undefined) return own;
  for (const k of ['allOf', 'oneOf', 'anyOf'] as const) {
    const list = schema[k];
    if (Array.isArray(list) && list.length) {
      if (k !== 'allOf') return sampleOf(list[0], depth + 1);
      const merged: JsonObject = {};
      for (const part of list) {
        const v = sampleOf(part, depth + 1);
        if (isJsonObject(v)) Object.assign(merged, v);
      }
      return merged;
    }
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'object' || isJsonObject(schema.properties)) {
    const out: JsonObject = {};
    const props = isJsonObject(schema.properties) ? schema.properties : {};
    for (const [name, sub] of Object.entries(props).slice(0, 50)) out[name] = sampleOf(sub, depth + 1);
    return out;
  }
  if (type === 'array') return [sampleOf(schema.items, depth + 1)];
  if (type === 'integer' || type === 'number') return 0;
  if (type === 'boolean') return false;
  if (type === 'string') return '';
  return null;
}

function fieldOf(p: unknown): ConsoleField | null {
  if (!isJsonObject(p) || typeof p.name !== 'string' || !p.name) return null;
  const where = p.in;
  if (where !== 'path' && where !== 'query' && where !== 'header') return null;
  if (where === 'header' && isReservedHeader(p.name)) return null;
  const schema = isJsonObject(p.schema) ? p.schema : {};
  const type = typeof schema.type === 'string' ? schema.type : 'string';
  const choices = Array.isArray(schema.enum) ? schema.enum.map(text).slice(0, 100) : null;
  const items = isJsonObject(schema.items) ? schema.items : null;
  return {
    in: where,
    name: p.name,
    required: where === 'path' || p.required === true,
    description: typeof p.description === 'string' ? p.description : '',
    type: type === 'array' && items && typeof items.type === 'string' ? `list of ${items.type}` : type,
    choices,
    example: text(exampleOf(schema) ?? (items ? exampleOf(items) : undefined)),
  };
}

function bodyOf(request: unknown, components: SchemaComponents): ConsoleBody | null {
  if (!isJsonObject(request)) return null;
  const contentType = typeof request.content_type === 'string' ? request.content_type : 'application/json';
  const isJson = /json/i.test(contentType);
  const schema = expandSchemaRefs(request.schema ?? null, components);
  const sample = sampleOf(schema);
  const example = isJson ? JSON.stringify(sample ?? {}, null, 2) : typeof sample === 'string' ? sample : '';
  return { contentType, required: request.required === true, example, isJson };
}

/** The form of every endpoint of a listing, in the listing's order. */
export function consoleForms(view: ListingSchemaView): ConsoleEndpointForm[] {
  const components = view.components.schemas as SchemaComponents;
  return view.endpoints.map((e) => {
    const params = Array.isArray(e.parameters) ? e.parameters : [];
    const fields = params.map((p) => fieldOf(expandSchemaRefs(p, components))).filter((f) => f !== null);
    // A path template names parameters the document may not declare: each gets a required field all the same.
    for (const m of e.path.matchAll(/\{([^}]+)\}/g)) {
      const name = m[1]!;
      if (!fields.some((f) => f.in === 'path' && f.name === name))
        fields.unshift({
          in: 'path',
          name,
          required: true,
          description: '',
          type: 'string',
          choices: null,
          example: '',
        });
    }
    return {
      endpointId: e.endpoint_id,
      method: e.method,
      path: e.path,
      summary: e.summary,
      priceCents: e.price_cents,
      fields,
      body: bodyOf(e.request, components),
    };
  });
}
