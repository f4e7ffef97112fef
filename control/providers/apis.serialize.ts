/** Explicit response shapes for provider-side listing routes: secrets never leave, only a fingerprint. */
import type { Row } from '../../core/db/database.js';
import { parseDiscounts } from '../../core/discounts.js';

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function parseJsonArray(s: string): string[] {
  try {
    const v: unknown = JSON.parse(s);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function toPendingPrice(p: Row<'price_changes'> | undefined) {
  if (!p) return null;
  return {
    change_id: p.id,
    old_price_cents: p.old_price_cents,
    new_price_cents: p.new_price_cents,
    new_discounts: p.new_discounts_json === null ? null : parseDiscounts(p.new_discounts_json),
    effective_at: iso(p.effective_at),
  };
}

export function toProviderEndpoint(e: Row<'endpoints'>, pending: Row<'price_changes'> | undefined) {
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

export function toProviderApi(a: Row<'apis'>) {
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

export function toProviderApiDetail(a: Row<'apis'>, endpoints: Row<'endpoints'>[], pending: Row<'price_changes'>[]) {
  const byEndpoint = new Map(pending.map((p) => [p.endpoint_id, p]));
  return { ...toProviderApi(a), endpoints: endpoints.map((e) => toProviderEndpoint(e, byEndpoint.get(e.id))) };
}
