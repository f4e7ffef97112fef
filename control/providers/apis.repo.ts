/** Queries over a provider's own listings and endpoints (taking `db` or a transaction). */
import type { Db, Row } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';

/** A listing row without its stored document and schema components (tens of MB for the largest APIs). */
export type OwnedApi = Omit<Row<'apis'>, 'openapi_json' | 'openapi_gz' | 'schema_components_json'>;
const OWNED_API_COLUMNS = [
  'id',
  'org_id',
  'slug',
  'name',
  'summary',
  'description',
  'category',
  'tags',
  'base_url',
  'docs_url',
  'logo_url',
  'health_path',
  'status',
  'suspended_at',
  'suspended_reason',
  'source_kind',
  'source_url',
  'import_report_json',
  'secret_enc',
  'secret_fingerprint',
  'injection',
  'injection_name',
  'published_at',
  'publish_terms_accepted_at',
  'last_verified_at',
  'last_verify_ok',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof OwnedApi)[];

/** An endpoint row without its request/response schemas, which listing management never needs. */
export type EndpointSummaryRow = Omit<Row<'endpoints'>, 'request_schema_json' | 'response_schema_json'>;
const ENDPOINT_SUMMARY_COLUMNS = [
  'id',
  'api_id',
  'method',
  'path',
  'operation_id',
  'summary',
  'description',
  'parameters_json',
  'price_cents',
  'discounts_json',
  'position',
  'removed_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof EndpointSummaryRow)[];

export async function getOwnedApi(db: Db, orgId: string, apiId: string): Promise<OwnedApi> {
  const row = await db.selectFrom('apis').select(OWNED_API_COLUMNS).where('id', '=', apiId).executeTakeFirst();
  // Another org's listing is reported as missing, not forbidden, so ids cannot be probed.
  if (!row || row.org_id !== orgId) throw new SvcError('not_found', `No listing ${apiId} in this organization`);
  return row;
}

export function listEndpoints(
  db: Db,
  apiId: string,
  includeRemoved = false,
  page?: { limit: number; offset: number },
): Promise<EndpointSummaryRow[]> {
  let q = db.selectFrom('endpoints').select(ENDPOINT_SUMMARY_COLUMNS).where('api_id', '=', apiId);
  if (!includeRemoved) q = q.where('removed_at', 'is', null);
  q = q.orderBy('position').orderBy('id');
  return (page ? q.limit(page.limit).offset(page.offset) : q).execute();
}

export function pendingChanges(db: Db, apiId: string): Promise<Row<'price_changes'>[]> {
  return db
    .selectFrom('price_changes')
    .selectAll()
    .where('api_id', '=', apiId)
    .where('status', '=', 'pending')
    .execute();
}

/** Lowercase, dash-separated, 3..60 chars: the catalog-side identifier of a listing or a provider. */
export function slugify(s: string): string {
  const base = s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50);
  return base.length >= 3 ? base : `api-${base || 'listing'}`;
}

/** Titles that say nothing about the API on their own ("API", "SqlManagementClient", "REST service"). */
const GENERIC_TITLE = /(^|-)(api|apis|rest|swagger|openapi|service|services|client|sdk|v\d+)$|client$/;

/**
 * A readable, unique slug for an imported listing: the title, prefixed with the provider's name when the title is
 * generic or taken, then the service name or version, and a counter only when nothing better is left.
 */
export async function importedApiSlug(
  db: Db,
  o: { name: string; providerName: string | null; serviceName: string | null; version: string },
): Promise<string> {
  const title = slugify(o.name);
  const provider = o.providerName ? slugify(providerLabel(o.providerName)) : null;
  const prefixed = provider && !title.startsWith(provider) ? slugify(`${provider}-${title}`) : title;
  const candidates = GENERIC_TITLE.test(title) && provider ? [prefixed] : [title, prefixed];
  if (o.serviceName) candidates.push(slugify(`${prefixed}-${o.serviceName}`));
  if (o.version) candidates.push(slugify(`${prefixed}-${o.version}`));
  return firstFreeSlug(db, [...new Set(candidates)]);
}

/** `azure.com` → `azure`, `api.stripe.com` → `stripe`: the registrable name without its suffix. */
function providerLabel(name: string): string {
  const labels = name.toLowerCase().split(/[.:]/).filter(Boolean);
  if (labels.length < 2) return name;
  const suffix = labels.length > 2 && /^(co|com|org|net|gov|ac)$/.test(labels[labels.length - 2]!) ? 2 : 1;
  return labels[labels.length - 1 - suffix] ?? name;
}

async function firstFreeSlug(db: Db, candidates: string[]): Promise<string> {
  const free = async (s: string) =>
    !(await db.selectFrom('apis').select('id').where('slug', '=', s).executeTakeFirst());
  for (const c of candidates) if (await free(c)) return c;
  const base = candidates[candidates.length - 1]!;
  for (let i = 2; i < 50; i++) if (await free(`${base}-${i}`)) return `${base}-${i}`;
  return `${base}-${Date.now().toString(36)}`;
}
