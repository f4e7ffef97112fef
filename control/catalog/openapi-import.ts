/**
 * Turns an OpenAPI 3.0/3.1 or Swagger 2.0 document (object, JSON or YAML text) into listing metadata and endpoints.
 * swagger-parser dereferences `$ref`s (local only, circular refs left as refs); hostile documents fail with `import_failed`.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse as parseYaml } from 'yaml';
import { SvcError } from '../../core/errors.js';
import { boundedJson } from './bounded-json.js';
import { expandedSize, MAX_EXPANDED_NODES } from './ref-budget.js';

export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;
export const MAX_ENDPOINTS = 500;
/** Per stored schema (parameters, request, response) after dereferencing: stops exponential `$ref` fan-out. */
export const MAX_SCHEMA_CHARS = 64 * 1024;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export interface ImportedEndpoint {
  method: string;
  path: string;
  operationId: string | null;
  summary: string;
  description: string;
  parametersJson: string;
  requestSchemaJson: string | null;
  responseSchemaJson: string | null;
}

export interface ImportedApi {
  title: string;
  description: string;
  version: string;
  baseUrl: string | null;
  tags: string[];
  category: string | null;
  endpoints: ImportedEndpoint[];
  warnings: string[];
  /** The document as received (not dereferenced), for GET /v1/apis/:slug/openapi. */
  documentJson: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function fail(detail: string): never {
  throw new SvcError('import_failed', detail);
}

/** Parses JSON or YAML text into an object, with the size cap and no YAML alias bombs. */
export function parseDocumentText(text: string): Obj {
  if (Buffer.byteLength(text, 'utf8') > MAX_DOCUMENT_BYTES)
    throw new SvcError('payload_too_large', `API description over ${MAX_DOCUMENT_BYTES} bytes`);
  let doc: unknown;
  const trimmed = text.trimStart();
  try {
    doc = trimmed.startsWith('{') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
  } catch (e) {
    fail(`Not valid JSON or YAML: ${(e as Error).message.slice(0, 200)}`);
  }
  if (!isObj(doc)) fail('The API description must be a JSON or YAML object');
  return doc;
}

export async function importOpenApi(input: Obj): Promise<ImportedApi> {
  const documentJson = JSON.stringify(input);
  if (documentJson.length > MAX_DOCUMENT_BYTES)
    throw new SvcError('payload_too_large', `API description over ${MAX_DOCUMENT_BYTES} bytes`);
  const isV2 = input.swagger === '2.0';
  const isV3 = typeof input.openapi === 'string' && /^3\.[01]\.\d+$/.test(input.openapi);
  if (!isV2 && !isV3)
    fail('Not an OpenAPI 3.0/3.1 or Swagger 2.0 document (missing `openapi: 3.x.y` or `swagger: "2.0"`)');
  const info = isObj(input.info) ? input.info : fail('`info` object is missing');
  if (!str(info.title)) fail('`info.title` is missing');
  if (!isObj(input.paths)) fail('`paths` object is missing');

  if (expandedSize(input) > MAX_EXPANDED_NODES)
    fail(`The document expands to more than ${MAX_EXPANDED_NODES} nodes once its $refs are resolved`);
  const warnings: string[] = [];
  const opts = { resolve: { external: false }, dereference: { circular: 'ignore' as const } };
  let doc: Obj;
  try {
    // validate() dereferences as it goes: on success its result is the dereferenced document we need.
    doc = (await SwaggerParser.validate(structuredClone(input) as never, opts)) as unknown as Obj;
  } catch (e) {
    // Real-world documents (including the canonical Swagger 2.0 petstore) often fail strict schema validation;
    // we import them when they still dereference, and report what the validator said.
    warnings.push(`schema validation: ${(e as Error).message.split('\n').slice(0, 4).join(' ').slice(0, 400)}`);
    try {
      doc = (await SwaggerParser.dereference(structuredClone(input) as never, opts)) as unknown as Obj;
    } catch (e2) {
      fail(`Could not resolve the document's $refs: ${(e2 as Error).message.slice(0, 300)}`);
    }
  }

  const endpoints: ImportedEndpoint[] = [];
  for (const [path, item] of Object.entries(doc.paths as Obj)) {
    if (!isObj(item) || !path.startsWith('/')) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const m of METHODS) {
      const op = item[m];
      if (!isObj(op)) continue;
      if (endpoints.length >= MAX_ENDPOINTS) fail(`More than ${MAX_ENDPOINTS} operations`);
      const own = Array.isArray(op.parameters) ? op.parameters : [];
      const params = mergeParams(shared, own);
      const bodyParam = params.find((p) => p.in === 'body');
      endpoints.push({
        method: m.toUpperCase(),
        path,
        operationId: str(op.operationId) || null,
        summary: str(op.summary).slice(0, 500),
        description: str(op.description).slice(0, 5000),
        parametersJson: boundedJson(
          params.filter((p) => p.in !== 'body' && p.in !== 'formData').map(simplifyParam),
          MAX_SCHEMA_CHARS,
        ),
        requestSchemaJson: isV2
          ? bodyParam
            ? boundedJson(bodyParam.schema ?? null, MAX_SCHEMA_CHARS)
            : null
          : requestSchemaV3(op),
        responseSchemaJson: responseSchema(op, isV2),
      });
    }
  }
  if (endpoints.length === 0) fail('The document declares no operations under `paths`');
  const xCategory = str(info['x-category']) || str((input['x-rapidapi-info'] as Obj | undefined)?.category);
  return {
    title: str(info.title).slice(0, 200),
    description: str(info.description).slice(0, 10_000),
    version: str(info.version),
    baseUrl: isV2 ? baseUrlV2(input) : baseUrlV3(input),
    tags: Array.isArray(input.tags)
      ? input.tags
          .map((t) => (isObj(t) ? str(t.name) : ''))
          .filter(Boolean)
          .slice(0, 20)
      : [],
    category: xCategory
      ? xCategory
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .slice(0, 40)
      : null,
    endpoints,
    warnings,
    documentJson,
  };
}

function mergeParams(shared: unknown[], own: unknown[]): Obj[] {
  const byKey = new Map<string, Obj>();
  for (const p of [...shared, ...own]) if (isObj(p)) byKey.set(`${str(p.in)}:${str(p.name)}`, p);
  return [...byKey.values()];
}

function simplifyParam(p: Obj): Obj {
  const schema = isObj(p.schema) ? p.schema : { type: p.type, format: p.format, items: p.items, enum: p.enum };
  return {
    name: str(p.name),
    in: str(p.in),
    required: p.in === 'path' ? true : p.required === true,
    description: str(p.description),
    schema,
  };
}

function requestSchemaV3(op: Obj): string | null {
  const rb = isObj(op.requestBody) ? op.requestBody : null;
  if (!rb || !isObj(rb.content)) return null;
  const [type, media] = Object.entries(rb.content)[0] ?? [];
  if (!type || !isObj(media)) return null;
  return boundedJson(
    { content_type: type, required: rb.required === true, schema: media.schema ?? null },
    MAX_SCHEMA_CHARS,
  );
}

function responseSchema(op: Obj, isV2: boolean): string | null {
  if (!isObj(op.responses)) return null;
  const ok = Object.entries(op.responses).find(([code]) => /^2\d\d$/.test(code));
  if (!ok || !isObj(ok[1])) return null;
  const r = ok[1];
  if (isV2)
    return r.schema === undefined ? null : boundedJson({ status: Number(ok[0]), schema: r.schema }, MAX_SCHEMA_CHARS);
  if (!isObj(r.content)) return null;
  const [type, media] = Object.entries(r.content)[0] ?? [];
  if (!type || !isObj(media)) return null;
  return boundedJson({ status: Number(ok[0]), content_type: type, schema: media.schema ?? null }, MAX_SCHEMA_CHARS);
}

function baseUrlV3(doc: Obj): string | null {
  const s = Array.isArray(doc.servers) ? doc.servers[0] : undefined;
  if (!isObj(s) || !str(s.url)) return null;
  let url = str(s.url);
  const vars = isObj(s.variables) ? s.variables : {};
  url = url.replace(/\{([^}]+)\}/g, (_m, name: string) => str((vars[name] as Obj | undefined)?.default));
  return /^https?:\/\//.test(url) ? url.replace(/\/+$/, '') : null;
}

function baseUrlV2(doc: Obj): string | null {
  const host = str(doc.host);
  if (!host) return null;
  const schemes = Array.isArray(doc.schemes) ? doc.schemes.map(str) : [];
  const scheme = schemes.includes('https') ? 'https' : schemes[0] || 'https';
  return `${scheme}://${host}${str(doc.basePath).replace(/\/+$/, '')}`;
}
