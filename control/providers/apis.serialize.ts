/** Explicit response shapes for provider-side listing routes: secrets never leave, only a fingerprint. */
import type { Row } from '../../core/db/database.js';
import type { EndpointSummaryRow, OwnedApi } from './apis.repo.js';
import { parseDiscounts } from '../../core/discounts.js';
import type {
  ImportReport,
  ProviderApi,
  ProviderApiDetail,
  ProviderEndpoint,
} from '../../core/schemas/providers.schemas.js';
import type { PendingPrice } from '../../core/schemas/catalog.schemas.js';

/** ISO 8601 UTC for a stored ms timestamp; null stays null. */
export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export function parseJsonArray(s: string): string[] {
  try {
    const v: unknown = JSON.parse(s);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function toPendingPrice(p: Row<'price_changes'> | undefined): PendingPrice | null {
  if (!p) return null;
  return {
    change_id: p.id,
    old_price_cents: p.old_price_cents,
    new_price_cents: p.new_price_cents,
    new_discounts: p.new_discounts_json === null ? null : parseDiscounts(p.new_discounts_json),
    effective_at: iso(p.effective_at),
  };
}

export function toProviderEndpoint(e: EndpointSummaryRow, pending: Row<'price_changes'> | undefined): ProviderEndpoint {
  return {
    endpoint_id: e.id,
    method: e.method,
    path: e.path,
    operation_id: e.operation_id,
    summary: e.summary,
    price_cents: e.price_cents,
    discounts: parseDiscounts(e.discounts_json),
    pending_price: toPendingPrice(pending),
    removed: e.removed_at !== null,
  };
}

export function toProviderApi(a: OwnedApi): ProviderApi {
  return {
    api_id: a.id,
    slug: a.slug,
    name: a.name,
    summary: a.summary,
    description: a.description,
    category: a.category,
    tags: parseJsonArray(a.tags),
    base_url: a.base_url,
    docs_url: a.docs_url,
    logo_url: a.logo_url,
    health_path: a.health_path,
    status: a.status,
    suspended: a.suspended_at !== null,
    source: { kind: a.source_kind, url: a.source_url },
    /** What the last import found (operations, endpoints, warnings): null for listings not imported. */
    import_report: a.import_report_json === null ? null : (JSON.parse(a.import_report_json) as ImportReport),
    credentials: {
      set: a.secret_enc !== null,
      fingerprint: a.secret_fingerprint,
      injection: a.injection,
      injection_name: a.injection_name,
    },
    published_at: iso(a.published_at),
    last_verified_at: iso(a.last_verified_at),
    last_verify_ok: a.last_verify_ok === null ? null : a.last_verify_ok === 1,
    created_at: iso(a.created_at),
    updated_at: iso(a.updated_at),
  };
}

export function toProviderApiDetail(
  a: OwnedApi,
  endpoints: EndpointSummaryRow[],
  pending: Row<'price_changes'>[],
): ProviderApiDetail {
  const byEndpoint = new Map(pending.map((p) => [p.endpoint_id, p]));
  return { ...toProviderApi(a), endpoints: endpoints.map((e) => toProviderEndpoint(e, byEndpoint.get(e.id))) };
}
