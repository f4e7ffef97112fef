/**
 * Where a listing's description comes from: a direct `body`, an `openapi_url`, or a marketplace-import `rapidapi_url`
 * (an OpenAPI export, optionally wrapped; docs/providers.md). URL fetches go through the SSRF-checked safeFetch.
 */
import type { AppContext } from '../context.js';
import { SvcError } from '../../core/errors.js';
import { safeFetch } from '../catalog/safe-fetch.js';
import { importOpenApi, parseDocumentText, MAX_DOCUMENT_BYTES, type ImportedApi } from '../catalog/openapi-import.js';

export interface ImportSourceInput {
  openapi_url?: string | undefined;
  rapidapi_url?: string | undefined;
  body?: unknown;
}

export interface ResolvedImport {
  kind: 'openapi_url' | 'rapidapi_url' | 'body';
  url: string | null;
  api: ImportedApi;
}

export function sourceCount(input: ImportSourceInput): number {
  return [input.openapi_url, input.rapidapi_url, input.body].filter((v) => v !== undefined && v !== null).length;
}

export async function resolveImport(ctx: AppContext, input: ImportSourceInput): Promise<ResolvedImport> {
  if (sourceCount(input) !== 1) {
    throw new SvcError('validation_failed', 'Give exactly one of openapi_url, rapidapi_url or body', {
      errors: [{ path: 'openapi_url', message: 'exactly one source is required' }],
    });
  }
  if (input.body !== undefined && input.body !== null) {
    const doc = typeof input.body === 'string' ? parseDocumentText(input.body) : input.body;
    if (typeof doc !== 'object' || Array.isArray(doc))
      throw new SvcError('import_failed', '`body` must be an OpenAPI document (object or JSON/YAML text)');
    return { kind: 'body', url: null, api: await importOpenApi(doc as Record<string, unknown>) };
  }
  const kind = input.openapi_url !== undefined ? 'openapi_url' : 'rapidapi_url';
  const url = (input.openapi_url ?? input.rapidapi_url)!;
  const text = await fetchDocument(ctx, url);
  let doc = parseDocumentText(text);
  if (kind === 'rapidapi_url') doc = unwrapMarketplaceExport(doc);
  return { kind, url, api: await importOpenApi(doc) };
}

async function fetchDocument(ctx: AppContext, url: string): Promise<string> {
  let res;
  try {
    res = await safeFetch(url, {
      production: ctx.config.isProduction,
      egressAllow: ctx.config.egressAllow,
      timeoutMs: 10_000,
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
