/**
 * Turns an OpenAPI 3.0/3.1 or Swagger 2.0 document (object, JSON or YAML text) into listing metadata, endpoints and
 * the listing's named schema components. Pure and synchronous in its heavy part, so it runs in the import worker
 * pool (`import-pool.ts`); it never expands the whole document (`schema-inliner.ts`). Limits apply per operation and
 * per schema: an oversized schema is truncated with a marker and a warning, never a refusal of the whole API.
 */
import { parse as parseYaml } from 'yaml';
import type { SchemaComponents } from '../../core/schema-refs.js';
import { SvcError } from '../../core/errors.js';
import { pickCategory, type MarketplaceCategory } from './categories.js';
import { SchemaInliner } from './schema-inliner.js';
import { pickBaseUrl } from './server-url.js';
import { isJsonObject, type JsonObject } from '../../core/json-object.js';

/** Largest document, measured as compact JSON after parsing (pretty-printing or YAML does not count against it). */
export const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
/** Direct `body` imports: the request limit; larger documents go by `openapi_url`. */
export const MAX_BODY_DOCUMENT_BYTES = 2 * 1024 * 1024;
/** Sanity bound on one listing (Microsoft Graph beta, the largest public API description, has 22,361). */
export const MAX_OPERATIONS = 30_000;
export const MAX_PATH_CHARS = 2_048;
export const MAX_OPERATION_PARAMETERS = 300;
const MAX_WARNINGS = 100;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

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

/** What an import found, shown to the provider on every surface (REST, MCP, CLI). */
export interface ImportReport {
  operations_found: number;
  endpoints_imported: number;
  skipped_operations: number;
  schema_components: number;
  truncated_schemas: number;
  base_url_candidates: string[];
  warnings: string[];
}

export interface ImportedApi {
  title: string;
  description: string;
  version: string;
  baseUrl: string | null;
  tags: string[];
  category: MarketplaceCategory;
  /** `info.x-providerName` (APIs.guru) or the base URL's host, for readable slugs. */
  providerName: string | null;
  serviceName: string | null;
  endpoints: ImportedEndpoint[];
  components: SchemaComponents;
  warnings: string[];
  report: ImportReport;
  /** The document as received (not dereferenced), for GET /v1/apis/:slug/openapi. */
  documentJson: string;
}

export interface ImportOptions {
  /** Where the document was fetched from: relative server URLs resolve against it. */
  documentUrl?: string | null;
  /** Size cap of the compact JSON document (direct bodies get the smaller MAX_BODY_DOCUMENT_BYTES). */
  maxBytes?: number;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function fail(detail: string, limit?: { limit: string; value: number; max: number; at: string }): never {
  throw new SvcError('import_failed', detail, limit ? { extra: limit } : {});
}

function tooLarge(bytes: number, max: number): SvcError {
  return new SvcError(
    'payload_too_large',
    `The API description is ${bytes} bytes, over the ${max}-byte limit` +
      (max < MAX_DOCUMENT_BYTES ? `; import larger documents (up to ${MAX_DOCUMENT_BYTES} bytes) by openapi_url` : ''),
    { extra: { limit: 'document_bytes', value: bytes, max, at: '/' } },
  );
}

/** Parses JSON or YAML text into an object, with the size cap and no YAML alias bombs. */
export function parseDocumentText(text: string, maxBytes = MAX_DOCUMENT_BYTES): JsonObject {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) throw tooLarge(bytes, maxBytes);
  let doc: unknown;
  const trimmed = text.trimStart();
  try {
    doc = trimmed.startsWith('{') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
  } catch (e) {
    fail(`Not valid JSON or YAML: ${(e as Error).message.slice(0, 200)}`);
  }
  if (!isJsonObject(doc)) fail('The API description must be a JSON or YAML object');
  return doc;
}

// Long: one pass over the document's paths (OpenAPI 2 and 3) that collects endpoints and warnings against the same size
// and count limits.
export async function importOpenApi(input: JsonObject, opts: ImportOptions = {}): Promise<ImportedApi> {
  const documentJson = JSON.stringify(input);
  const maxBytes = opts.maxBytes ?? MAX_DOCUMENT_BYTES;
  if (documentJson.length > maxBytes) throw tooLarge(documentJson.length, maxBytes);
  const isV2 = input.swagger === '2.0';
  const isV3 = typeof input.openapi === 'string' && /^3\.[01]\.\d+/.test(input.openapi);
  if (!isV2 && !isV3)
    fail('Not an OpenAPI 3.0/3.1 or Swagger 2.0 document (missing `openapi: 3.x.y` or `swagger: "2.0"`)');
  const info = isJsonObject(input.info) ? input.info : fail('`info` object is missing');
  if (!isJsonObject(input.paths)) fail('`paths` object is missing');

  const warnings: string[] = [];
  let dropped = 0;
  const warn = (m: string): void => {
    if (warnings.length < MAX_WARNINGS) warnings.push(m);
    else dropped++;
  };

  const inliner = new SchemaInliner(input, warn);
  const endpoints: ImportedEndpoint[] = [];
  const seen = new Set<string>();
  let found = 0;
  let skipped = 0;
  for (const [path, rawItem] of Object.entries(input.paths)) {
    const item = inliner.deref(rawItem, `paths.${path}`);
    if (!isJsonObject(item)) continue;
    if (!path.startsWith('/')) {
      warn(`paths.${path.slice(0, 100)}: path does not start with '/'; skipped`);
      continue;
    }
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const m of METHODS) {
      const op = item[m];
      if (!isJsonObject(op)) continue;
      found++;
      const where = `paths.${path}.${m}`;
      const key = `${m} ${path}`;
      if (found > MAX_OPERATIONS)
        fail(`The document has more than ${MAX_OPERATIONS} operations`, {
          limit: 'operations',
          value: found,
          max: MAX_OPERATIONS,
          at: `/paths`,
        });
      if (path.length > MAX_PATH_CHARS || seen.has(key)) {
        skipped++;
        warn(
          `${where.slice(0, 200)}: ${seen.has(key) ? 'duplicate operation' : `path over ${MAX_PATH_CHARS} characters`}; skipped`,
        );
        continue;
      }
      const params = mergeParams(inliner, shared, Array.isArray(op.parameters) ? op.parameters : [], where);
      if (params.length > MAX_OPERATION_PARAMETERS) {
        skipped++;
        warn(`${where}: ${params.length} parameters, over ${MAX_OPERATION_PARAMETERS}; skipped`);
        continue;
      }
      seen.add(key);
      const ctx: OpContext = { inliner, where, doc: input, op };
      endpoints.push({
        method: m.toUpperCase(),
        path,
        operationId: str(op.operationId).slice(0, 200) || null,
        summary: plainText(str(op.summary) || firstLine(str(op.description))).slice(0, 500),
        description: str(op.description).slice(0, 5000),
        parametersJson: JSON.stringify(
          params
            .filter((p) => p.in !== 'body' && p.in !== 'formData')
            .map((p) => simplifyParam(inliner, p, `${where}.parameters.${str(p.name)}`)),
        ),
        requestSchemaJson: json(isV2 ? requestSchemaV2(ctx, params) : requestSchemaV3(ctx)),
        responseSchemaJson: json(responseSchema(ctx, isV2)),
      });
    }
  }
  if (endpoints.length === 0) fail('The document declares no operations under `paths`');
  const components = inliner.components();
  if (dropped) warnings.push(`… and ${dropped} more warnings`);

  const servers = isV2 ? serversV2(input) : serversV3(input);
  const { baseUrl, candidates } = pickBaseUrl(servers, opts.documentUrl ?? null);
  const tags = Array.isArray(input.tags)
    ? input.tags
        .map((t) => (isJsonObject(t) ? str(t.name) : ''))
        .filter(Boolean)
        .slice(0, 20)
    : [];
  const guru = info['x-apisguru-categories'];
  const categoryCandidates = [
    ...(Array.isArray(guru) ? guru.map(str) : [str(guru)]),
    str(info['x-category']),
    str((input['x-rapidapi-info'] as JsonObject | undefined)?.category),
    ...tags,
  ].filter(Boolean);
  const providerName = str(info['x-providerName']) || (baseUrl ? new URL(baseUrl).hostname : '');
  return {
    title: plainText(str(info.title)).slice(0, 200),
    description: str(info.description).slice(0, 10_000),
    version: str(info.version),
    baseUrl,
    tags: tags.map((t) => t.slice(0, 40)),
    category: pickCategory(categoryCandidates),
    providerName: providerName || null,
    serviceName: str(info['x-serviceName']) || null,
    endpoints,
    components,
    warnings,
    report: {
      operations_found: found,
      endpoints_imported: endpoints.length,
      skipped_operations: skipped,
      schema_components: Object.keys(components).length,
      truncated_schemas: inliner.truncated,
      base_url_candidates: candidates,
      warnings,
    },
    documentJson,
  };
}

interface OpContext {
  inliner: SchemaInliner;
  where: string;
  doc: JsonObject;
  op: JsonObject;
}

const json = (v: unknown): string | null => (v === null ? null : JSON.stringify(v));

function mergeParams(inliner: SchemaInliner, shared: unknown[], own: unknown[], where: string): JsonObject[] {
  const byKey = new Map<string, JsonObject>();
  for (const raw of [...shared, ...own]) {
    const p = inliner.deref(raw, `${where}.parameters`);
    if (isJsonObject(p)) byKey.set(`${str(p.in)}:${str(p.name)}`, p);
  }
  return [...byKey.values()];
}

/** Swagger 2 keeps a parameter's schema in the parameter itself (`type`, `items`, ...). */
function v2ParamSchema(p: JsonObject): JsonObject {
  const s: JsonObject = {};
  for (const k of ['type', 'format', 'items', 'enum', 'default', 'minimum', 'maximum', 'pattern', 'maxLength'])
    if (p[k] !== undefined) s[k] = p[k];
  if (s.type === 'file') {
    s.type = 'string';
    s.format = 'binary';
  }
  if (p.description !== undefined) s.description = p.description;
  return s;
}

function simplifyParam(inliner: SchemaInliner, p: JsonObject, where: string): JsonObject {
  const schema = p.schema !== undefined ? p.schema : v2ParamSchema(p);
  return {
    name: str(p.name),
    in: str(p.in),
    required: p.in === 'path' ? true : p.required === true,
    description: str(p.description),
    schema: inliner.schema(schema, where),
  };
}

/** Swagger 2: a `body` parameter, or the `formData` parameters as one form schema (url-encoded, or multipart). */
function requestSchemaV2(ctx: OpContext, params: JsonObject[]): JsonObject | null {
  const consumes = (Array.isArray(ctx.op.consumes) ? ctx.op.consumes : ctx.doc.consumes) as unknown;
  const types = Array.isArray(consumes) ? consumes.map(str) : [];
  const body = params.find((p) => p.in === 'body');
  if (body)
    return {
      content_type: types.find((t) => /json/i.test(t)) ?? types[0] ?? 'application/json',
      required: body.required === true,
      schema: ctx.inliner.schema(body.schema ?? {}, `${ctx.where}.requestBody`),
    };
  const form = params.filter((p) => p.in === 'formData');
  if (!form.length) return null;
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const p of form) {
    properties[str(p.name)] = ctx.inliner.schema(v2ParamSchema(p), `${ctx.where}.formData.${str(p.name)}`);
    if (p.required === true) required.push(str(p.name));
  }
  const multipart = form.some((p) => p.type === 'file') || types.includes('multipart/form-data');
  return {
    content_type: multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded',
    required: required.length > 0,
    schema: { type: 'object', properties, ...(required.length ? { required } : {}) },
  };
}

/** The media type whose schema is stored: one with a schema first, JSON preferred, else the first declared. */
function pickMedia(content: JsonObject): [string, JsonObject] | null {
  const entries = Object.entries(content).filter((e): e is [string, JsonObject] => isJsonObject(e[1]));
  const withSchema = entries.filter(([, m]) => m.schema !== undefined);
  return (
    withSchema.find(([t]) => /json/i.test(t)) ??
    withSchema[0] ??
    entries.find(([t]) => /json/i.test(t)) ??
    entries[0] ??
    null
  );
}

function requestSchemaV3(ctx: OpContext): JsonObject | null {
  const rb = ctx.inliner.deref(ctx.op.requestBody, `${ctx.where}.requestBody`);
  if (!isJsonObject(rb) || !isJsonObject(rb.content)) return null;
  const media = pickMedia(rb.content);
  if (!media) return null;
  return {
    content_type: media[0],
    required: rb.required === true,
    schema: ctx.inliner.schema(media[1].schema ?? null, `${ctx.where}.requestBody`),
  };
}

function responseSchema(ctx: OpContext, isV2: boolean): JsonObject | null {
  if (!isJsonObject(ctx.op.responses)) return null;
  const ok = Object.entries(ctx.op.responses).find(([code]) => /^2(\d\d|XX)$/i.test(code));
  if (!ok) return null;
  const where = `${ctx.where}.responses.${ok[0]}`;
  const r = ctx.inliner.deref(ok[1], where);
  if (!isJsonObject(r)) return null;
  const status = /^\d+$/.test(ok[0]) ? Number(ok[0]) : 200;
  if (isV2) {
    if (r.schema === undefined) return null;
    const produces = (Array.isArray(ctx.op.produces) ? ctx.op.produces : ctx.doc.produces) as unknown;
    const types = Array.isArray(produces) ? produces.map(str) : [];
    return {
      status,
      content_type: types.find((t) => /json/i.test(t)) ?? types[0] ?? 'application/json',
      schema: ctx.inliner.schema(r.schema, where),
    };
  }
  if (!isJsonObject(r.content)) return null;
  const media = pickMedia(r.content);
  if (!media) return null;
  return { status, content_type: media[0], schema: ctx.inliner.schema(media[1].schema ?? null, where) };
}

function serversV3(doc: JsonObject): string[] {
  const out: string[] = [];
  for (const s of Array.isArray(doc.servers) ? doc.servers : []) {
    if (!isJsonObject(s) || !str(s.url)) continue;
    const vars = isJsonObject(s.variables) ? s.variables : {};
    out.push(
      str(s.url).replace(/\{([^}]+)\}/g, (_m, name: string) => {
        const v = vars[name];
        return isJsonObject(v) ? str(v.default) || (Array.isArray(v.enum) ? str(v.enum[0]) : '') : '';
      }),
    );
  }
  return out;
}

function serversV2(doc: JsonObject): string[] {
  const basePath = str(doc.basePath);
  const schemes = Array.isArray(doc.schemes) ? doc.schemes.map(str).filter(Boolean) : [];
  const host = str(doc.host);
  if (!host) return basePath ? [basePath] : [];
  return (schemes.length ? schemes : ['https']).map((s) => `${s}://${host}${basePath}`);
}

const firstLine = (s: string): string => s.split('\n').find((l) => l.trim()) ?? '';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

/** Summary text without HTML tags or entities, whitespace collapsed. */
export function plainText(s: string): string {
  return s
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(amp|lt|gt|quot|apos|nbsp|#39);/g, (_m, e: string) => ENTITIES[e] ?? '')
    .replace(/\s+/g, ' ')
    .trim();
}
