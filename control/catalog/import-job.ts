/**
 * One import as the worker runs it: fetch (URL sources, SSRF-checked), parse, normalise. Everything CPU- or
 * memory-heavy about an import happens here, off the control plane's event loop (`import-pool.ts`).
 */
import { getHeapStatistics } from 'node:v8';
import { gzipSync } from 'node:zlib';
import { SvcError } from '../../core/errors.js';
import {
  importOpenApi,
  MAX_BODY_DOCUMENT_BYTES,
  MAX_DOCUMENT_BYTES,
  parseDocumentText,
  type ImportedApi,
} from './openapi-import.js';
import { type SafeFetchResult, safeFetch } from './safe-fetch.js';

export type ImportJob =
  | { kind: 'url'; url: string; production: boolean; egressAllow?: readonly string[]; marketplaceExport: boolean }
  | { kind: 'body'; body: string | Record<string, unknown> };

export interface ImportStats {
  fetch_ms: number;
  parse_ms: number;
  normalize_ms: number;
  document_bytes: number;
  /** Largest V8 heap use seen in the worker during the import. */
  heap_peak_bytes: number;
}

/**
 * What the control plane stores: the document gzipped here in the worker (a 45 MB document is about 3 MB), so
 * neither the transfer to the main thread nor the database write holds the event loop for long.
 */
export type StorableImport = Omit<ImportedApi, 'documentJson'> & { documentGzip: Uint8Array };

/** What an import writes itself when it stores a new listing (the bulk of it: rows, document, components). */
export type HeavyParts = Pick<StorableImport, 'endpoints' | 'documentGzip' | 'components'>;

/** A parsed import without its heavy parts, which stay in the worker until it stores them (`ImportPool.runAndStore`). */
export type ParsedImport = Omit<StorableImport, keyof HeavyParts> & { endpointCount: number };

export interface ImportJobResult {
  api: StorableImport;
  stats: ImportStats;
}

export async function runImportJob(job: ImportJob): Promise<ImportJobResult> {
  let heapPeak = 0;
  const sample = (): void => {
    heapPeak = Math.max(heapPeak, getHeapStatistics().used_heap_size);
  };
  const t0 = performance.now();
  let doc: Record<string, unknown>;
  let fetchMs = 0;
  let documentUrl: string | null = null;
  let maxBytes = MAX_DOCUMENT_BYTES;
  if (job.kind === 'body') {
    maxBytes = MAX_BODY_DOCUMENT_BYTES;
    doc = typeof job.body === 'string' ? parseDocumentText(job.body, MAX_BODY_DOCUMENT_BYTES) : job.body;
  } else {
    const text = await fetchDocument(job.url, job.production, job.egressAllow ?? []);
    fetchMs = performance.now() - t0;
    sample();
    doc = parseDocumentText(text);
    if (job.marketplaceExport) doc = unwrapMarketplaceExport(doc);
    documentUrl = job.url;
  }
  sample();
  const t1 = performance.now();
  const { documentJson, ...api } = await importOpenApi(doc, { documentUrl, maxBytes });
  sample();
  const documentGzip = gzipSync(documentJson);
  return {
    api: { ...api, documentGzip },
    stats: {
      fetch_ms: Math.round(fetchMs),
      parse_ms: Math.round(t1 - t0 - fetchMs),
      normalize_ms: Math.round(performance.now() - t1),
      document_bytes: documentJson.length,
      heap_peak_bytes: heapPeak,
    },
  };
}

async function fetchDocument(url: string, production: boolean, egressAllow: readonly string[]): Promise<string> {
  let res: SafeFetchResult;
  try {
    // undici decompresses gzip/br/deflate bodies, so the cap counts decompressed bytes.
    res = await safeFetch(url, {
      production,
      egressAllow,
      timeoutMs: 30_000,
      maxBytes: MAX_DOCUMENT_BYTES,
      headers: { accept: 'application/json, application/yaml, text/yaml, */*' },
    });
  } catch (e) {
    if (e instanceof SvcError && (e.code === 'upstream_error' || e.code === 'upstream_timeout')) {
      throw new SvcError('import_failed', `Could not fetch the API description: ${e.detail}`);
    }
    throw e;
  }
  if (res.status < 200 || res.status > 299)
    throw new SvcError('import_failed', `Fetching the API description returned HTTP ${res.status}`);
  return res.text;
}

/**
 * Marketplace exports (RapidAPI Hub "Export OpenAPI") are OpenAPI 3 documents, sometimes wrapped by tooling as
 * `{ "openapi_spec": {...} }` or `{ "spec": {...} }`; `x-rapidapi-info.category` becomes the listing category.
 */
function unwrapMarketplaceExport(doc: Record<string, unknown>): Record<string, unknown> {
  for (const k of ['openapi_spec', 'spec', 'openapi_document']) {
    const inner = doc[k];
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) return inner as Record<string, unknown>;
  }
  return doc;
}
