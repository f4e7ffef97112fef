/**
 * Where a listing's description comes from: a direct `body`, an `openapi_url`, or a marketplace-import `rapidapi_url`
 * (an OpenAPI export, optionally wrapped; docs/providers.md). Fetching, parsing and normalising run in the import
 * worker pool (control/catalog/import-pool.ts), never on the control plane's event loop.
 */
import type { AppContext } from '../context.js';
import { SvcError } from '../../core/errors.js';
import { importPool } from '../catalog/import-pool.js';
import type { ImportJob, ImportStats, ParsedImport, StorableImport } from '../catalog/import-job.js';
import type { StoreStats, StoreTarget } from '../catalog/import-store.js';
import { assertFetchableUrl } from '../catalog/safe-fetch.js';

export interface ImportSourceInput {
  openapi_url?: string | undefined;
  rapidapi_url?: string | undefined;
  body?: unknown;
}

export interface ResolvedImport {
  kind: 'openapi_url' | 'rapidapi_url' | 'body';
  url: string | null;
  api: StorableImport;
  stats: ImportStats;
}

export function sourceCount(input: ImportSourceInput): number {
  return [input.openapi_url, input.rapidapi_url, input.body].filter((v) => v !== undefined && v !== null).length;
}

export async function resolveImport(ctx: AppContext, input: ImportSourceInput): Promise<ResolvedImport> {
  const { kind, url, job } = importJob(ctx, input);
  const { api, stats } = await importPool(ctx.config.imports).run(job);
  return { kind, url, api, stats };
}

export type ParsedSource = Omit<ResolvedImport, 'api'> & { api: ParsedImport };

/**
 * A new listing's import: parsed in a worker, `place` creates the listing from it (without endpoints) and names
 * where to write, and the worker writes the endpoints through its own database connection (import-store.ts).
 */
export async function importNewListing(
  ctx: AppContext,
  input: ImportSourceInput,
  place: (source: ParsedSource) => Promise<StoreTarget>,
): Promise<ParsedSource & { stored: StoreStats }> {
  const { kind, url, job } = importJob(ctx, input);
  const r = await importPool(ctx.config.imports).runAndStore(job, (api, stats) => place({ kind, url, api, stats }));
  return { kind, url, api: r.parsed, stats: r.stats, stored: r.stored };
}

function importJob(
  ctx: AppContext,
  input: ImportSourceInput,
): Pick<ResolvedImport, 'kind' | 'url'> & { job: ImportJob } {
  if (sourceCount(input) !== 1) {
    throw new SvcError('validation_failed', 'Give exactly one of openapi_url, rapidapi_url or body', {
      errors: [{ path: 'openapi_url', message: 'exactly one source is required' }],
    });
  }
  if (input.body !== undefined && input.body !== null) {
    const body = input.body;
    if (typeof body !== 'string' && (typeof body !== 'object' || Array.isArray(body)))
      throw new SvcError('import_failed', '`body` must be an OpenAPI document (object or JSON/YAML text)');
    return { kind: 'body', url: null, job: { kind: 'body', body: body as string | Record<string, unknown> } };
  }
  const kind = input.openapi_url !== undefined ? 'openapi_url' : 'rapidapi_url';
  const url = (input.openapi_url ?? input.rapidapi_url)!;
  // Refuse a bad URL before it takes a place in the pool.
  assertFetchableUrl(url, ctx.config.isProduction, ctx.config.egressAllow);
  return {
    kind,
    url,
    job: {
      kind: 'url',
      url,
      production: ctx.config.isProduction,
      egressAllow: ctx.config.egressAllow,
      marketplaceExport: kind === 'rapidapi_url',
    },
  };
}
