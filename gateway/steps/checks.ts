/**
 * The pure per-call checks between authentication and reservation: listing and endpoint, terms (428), price
 * with volume discounts, the caller's max price, free-only keys and the per-call cap. Returns the priced call
 * or the refusal; no I/O beyond the in-memory caches.
 */
import type { ErrorCode } from '../../core/errors.js';
import { priceForNextCall } from '../../core/discounts.js';
import { matchEndpoint, type EndpointRec, type Listing, type ListingCache } from '../cache/listing-cache.js';
import type { KeyRecord } from '../cache/key-cache.js';

export type Refusal = { ok: false; code: ErrorCode; detail: string; extra?: Record<string, unknown> };
export type Resolved = { ok: true; listing: Listing; endpoint: EndpointRec };

export function resolveListing(listings: ListingCache, slug: string, method: string, path: string): Resolved | Refusal {
  const listing = slug ? listings.bySlug(slug) : null;
  if (!listing) return { ok: false, code: 'listing_not_found', detail: `No live API listing with slug "${slug}".` };
  const endpoint = matchEndpoint(listing, method, path);
  if (!endpoint)
    return { ok: false, code: 'endpoint_not_found', detail: `${slug} has no ${method} endpoint matching ${path}.` };
  return { ok: true, listing, endpoint };
}

export function monthStartOf(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export function priceOf(listings: ListingCache, orgId: string, endpoint: EndpointRec, now: number): number {
  if (endpoint.tiers.length === 0 || endpoint.priceCents === 0) return endpoint.priceCents;
  return priceForNextCall(
    endpoint.priceCents,
    endpoint.tiers,
    listings.monthCalls(orgId, endpoint.id, monthStartOf(now)),
  );
}

/** Checks that need the key and the price; `maxPrice` is X-Svc-Max-Price-Cents (null when absent). */
export function checkCall(
  listings: ListingCache,
  key: KeyRecord,
  resolved: Resolved,
  price: number,
  maxPrice: number | null,
): Refusal | null {
  const doc = resolved.listing.requiredTermsDocId;
  // A provider's own org never needs to accept its own terms (docs/providers.md).
  const own = resolved.listing.providerOrgId === key.orgId;
  if (doc !== null && !own && !listings.termsAccepted(key.orgId, doc)) {
    return {
      ok: false,
      code: 'terms_not_accepted',
      detail: `The provider of ${resolved.listing.slug} requires its terms to be accepted first: an org owner or admin accepts them with a session (dashboard, or POST /v1/apis/${resolved.listing.slug}/terms/accept).`,
      extra: { document_id: doc },
    };
  }
  if (maxPrice !== null && price > maxPrice) {
    return {
      ok: false,
      code: 'price_above_max',
      detail: `The current price is ${price} cents, above your X-Svc-Max-Price-Cents of ${maxPrice}.`,
      extra: { price_cents: price, available_cents: maxPrice },
    };
  }
  if (price > 0 && key.freeOnly) {
    return {
      ok: false,
      code: 'free_only_key',
      detail: `This key may call free endpoints only; this one costs ${price} cents.`,
      extra: { price_cents: price },
    };
  }
  if (key.perCallMaxCents !== null && price > key.perCallMaxCents) {
    return {
      ok: false,
      code: 'per_call_cap_exceeded',
      detail: `This call costs ${price} cents, above the key's per-call cap of ${key.perCallMaxCents}.`,
      extra: { price_cents: price, available_cents: key.perCallMaxCents },
    };
  }
  return null;
}
