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
  const bad = escapingParameter(endpoint, path);
  if (bad !== null)
    return {
      ok: false,
      code: 'path_not_allowed',
      detail: `The path parameter "${bad.slice(0, 100)}" could leave the endpoint's path: \`.\` and \`..\` segments, encoded slashes and backslashes are refused (docs/security.md).`,
    };
  const unfilled = unfilledParameter(endpoint, path);
  if (unfilled !== null)
    return {
      ok: false,
      code: 'validation_failed',
      detail: `The path parameter ${unfilled} has no value: the path still holds its placeholder. Put the value in the path (MCP call_api: in \`input\`); nothing was charged.`,
    };
  return { ok: true, listing, endpoint };
}

/**
 * A `{param}` segment still holding a placeholder (`{city}`, sent as is or percent-encoded): the caller forgot the
 * value. Refused before any reservation, so it is never forwarded or charged; MCP's call_api relies on this rule.
 * Returns the placeholder, or null.
 */
export function unfilledParameter(endpoint: EndpointRec, path: string): string | null {
  const parts = path.split('/').slice(1);
  for (let i = 0; i < endpoint.segments.length; i++) {
    if (endpoint.segments[i] !== null) continue;
    const raw = parts[i] ?? '';
    if (!raw.includes('{') && !/%7b/i.test(raw)) continue;
    let value = raw;
    try {
      value = decodeURIComponent(raw);
    } catch {
      /* malformed escapes: escapingParameter refuses them */
    }
    if (/^\{[^{}]*\}$/.test(value)) return value;
  }
  return null;
}

/**
 * The path rule: the upstream path must stay inside the matched template, so a `{param}` segment that an upstream
 * could read as a dot segment or a separator (after percent-decoding, or before a `;` matrix suffix) is refused.
 * Returns the offending raw segment, or null.
 */
export function escapingParameter(endpoint: EndpointRec, path: string): string | null {
  const parts = path.split('/').slice(1);
  for (let i = 0; i < endpoint.segments.length; i++) {
    if (endpoint.segments[i] !== null) continue;
    const raw = parts[i] ?? '';
    if (!raw.includes('.') && !raw.includes('%') && !raw.includes('\\')) continue; // the common case, no decoding
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      return raw; // malformed percent-encoding: an upstream could decode it either way
    }
    const bare = value.split(';')[0]!;
    if (bare === '.' || bare === '..' || /[/\\\0]/.test(value)) return raw;
  }
  return null;
}

export const MAX_PRICE_HEADER = 'x-svc-max-price-cents';

/**
 * X-Svc-Max-Price-Cents: absent = no cap; otherwise plain decimal digits (no sign, exponent, hex, fraction or
 * leading zero), one value. An empty or malformed value is an error, never "no cap": a caller who meant a cap
 * must not be charged without one. Returns the cap, null for none, or the reason it is refused.
 */
export function parseMaxPrice(headers: readonly [string, string][]): number | null | { invalid: string } {
  let raw: string | undefined;
  for (const [k, v] of headers) {
    if (k !== MAX_PRICE_HEADER) continue;
    if (raw !== undefined) return { invalid: 'send the header once' };
    raw = v.trim();
  }
  if (raw === undefined) return null;
  if (!/^(0|[1-9][0-9]{0,14})$/.test(raw))
    return { invalid: 'must be a whole number of cents in plain decimal digits, e.g. 25' };
  return Number(raw);
}

/** The month `monthStartOf` answered last, [from, until): every paid call asks, and the month rarely changes. */
let _month = { from: 0, until: 0 };

/** The first millisecond (UTC) of the month `ms` falls in. */
export function monthStartOf(ms: number): number {
  if (ms >= _month.from && ms < _month.until) return _month.from;
  const d = new Date(ms);
  const from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  _month = { from, until: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
  return from;
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
      detail: `The provider of ${resolved.listing.slug} requires its terms to be accepted first (on its page, /apis/${resolved.listing.slug}).`,
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
