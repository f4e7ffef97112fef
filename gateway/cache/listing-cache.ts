/**
 * Listings by slug (upstream, injection, decrypted secret, endpoint templates and prices, active terms),
 * loaded from SQLite on a miss and dropped by the change feed on any 'api' or 'terms' change.
 */
import type Sqlite from 'better-sqlite3';
import { decryptSecret } from '../../core/crypto.js';
import { parseDiscounts, type DiscountTier } from '../../core/discounts.js';

export interface EndpointRec {
  id: string;
  method: string;
  /** Template segments; null marks a `{param}` segment. */
  segments: (string | null)[];
  literals: number;
  priceCents: number;
  tiers: DiscountTier[];
}

export interface Listing {
  apiId: string;
  slug: string;
  providerOrgId: string;
  /** Upstream origin, e.g. http://127.0.0.1:9000 */
  origin: string;
  /** Path prefix of the base URL without trailing slash ('' for none). */
  basePath: string;
  injection: 'none' | 'bearer' | 'header' | 'query';
  injectionName: string | null;
  secret: string | null;
  endpoints: EndpointRec[];
  /** The active (latest activated) terms document, if its acceptance is required. */
  requiredTermsDocId: string | null;
}

interface ApiRow {
  id: string;
  org_id: string;
  slug: string;
  base_url: string | null;
  status: string;
  suspended_at: number | null;
  secret_enc: string | null;
  injection: 'none' | 'bearer' | 'header' | 'query';
  injection_name: string | null;
}

export class ListingCache {
  /** Lookups answered from memory, and those that went to the database (gateway metrics). */
  hits = 0;
  misses = 0;
  /** slug -> listing, or null for "no live listing" (negative entries dropped on any api change). */
  readonly #bySlug = new Map<string, Listing | null>();
  readonly #accepted = new Map<string, boolean>();
  readonly #monthCalls = new Map<string, number>();
  readonly #s: ReturnType<typeof _prepare>;

  constructor(
    sqlite: Sqlite.Database,
    private readonly secretKey: Buffer | null,
  ) {
    this.#s = _prepare(sqlite);
  }

  bySlug(slug: string): Listing | null {
    const hit = this.#bySlug.get(slug);
    if (hit !== undefined) {
      this.hits++;
      return hit;
    }
    this.misses++;
    const listing = this.#load(slug);
    if (this.#bySlug.size > 50_000) this.#bySlug.clear();
    this.#bySlug.set(slug, listing);
    return listing;
  }

  termsAccepted(orgId: string, docId: string): boolean {
    const k = `${orgId}:${docId}`;
    let v = this.#accepted.get(k);
    if (v === undefined) {
      v = this.#s.accepted.get(orgId, docId) !== undefined;
      if (this.#accepted.size > 100_000) this.#accepted.clear();
      this.#accepted.set(k, v);
    }
    return v;
  }

  /** Charged calls of this org to this endpoint this UTC month (for volume discounts); counted locally after load. */
  monthCalls(orgId: string, endpointId: string, monthStart: number): number {
    const k = `${orgId}:${endpointId}:${monthStart}`;
    let v = this.#monthCalls.get(k);
    if (v === undefined) {
      v = this.#s.monthCalls.get(orgId, endpointId, monthStart)!.n;
      this.#monthCalls.set(k, v);
    }
    return v;
  }

  countCall(orgId: string, endpointId: string, monthStart: number): void {
    const k = `${orgId}:${endpointId}:${monthStart}`;
    const v = this.#monthCalls.get(k);
    if (v !== undefined) this.#monthCalls.set(k, v + 1);
  }

  dropApi(apiId: string): void {
    // Map iteration tolerates deletes; negative (null) entries go too, since a new or re-published listing
    // announces itself only by its own api id.
    for (const [slug, l] of this.#bySlug) if (l === null || l.apiId === apiId) this.#bySlug.delete(slug);
  }

  dropTerms(apiId: string): void {
    this.dropApi(apiId);
    this.#accepted.clear();
  }

  clear(): void {
    this.#bySlug.clear();
    this.#accepted.clear();
    this.#monthCalls.clear();
  }

  #load(slug: string): Listing | null {
    const s = this.#s;
    const api = s.api.get(slug);
    if (!api || api.status !== 'live' || api.suspended_at !== null || !api.base_url) return null;
    let origin: string;
    let basePath: string;
    try {
      const u = new URL(api.base_url);
      origin = u.origin;
      basePath = u.pathname.replace(/\/+$/, '');
    } catch {
      return null;
    }
    const endpoints = s.endpoints.all(api.id).map((e): EndpointRec => {
      const segments = e.path
        .split('/')
        .slice(1)
        .map((seg) => (/^\{[^}]+\}$/.test(seg) ? null : seg));
      return {
        id: e.id,
        method: e.method.toUpperCase(),
        segments,
        literals: segments.filter((x) => x !== null).length,
        priceCents: e.price_cents,
        tiers: parseDiscounts(e.discounts_json),
      };
    });
    // Most specific template first: /users/me wins over /users/{id}.
    endpoints.sort((a, b) => b.literals - a.literals);
    const doc = s.terms.get(api.id);
    let secret: string | null = null;
    if (api.secret_enc && this.secretKey) secret = decryptSecret(this.secretKey, api.secret_enc);
    return {
      apiId: api.id,
      slug: api.slug,
      providerOrgId: api.org_id,
      origin,
      basePath,
      injection: api.injection,
      injectionName: api.injection_name,
      secret,
      endpoints,
      requiredTermsDocId: doc && doc.acceptance_mode === 'required' ? doc.id : null,
    };
  }
}

/** The endpoint whose method and template match `path` (no query), or undefined. HEAD falls back to GET. */
export function matchEndpoint(listing: Listing, method: string, path: string): EndpointRec | undefined {
  const parts = path.split('/').slice(1);
  const find = (m: string) =>
    listing.endpoints.find(
      (e) =>
        e.method === m &&
        e.segments.length === parts.length &&
        e.segments.every((seg, i) => (seg === null ? parts[i] !== '' : seg === parts[i])),
    );
  return find(method) ?? (method === 'HEAD' ? find('GET') : undefined);
}

function _prepare(db: Sqlite.Database) {
  return {
    api: db.prepare<[string], ApiRow>(
      'SELECT id, org_id, slug, base_url, status, suspended_at, secret_enc, injection, injection_name FROM apis WHERE slug = ?',
    ),
    endpoints: db.prepare<
      [string],
      { id: string; method: string; path: string; price_cents: number; discounts_json: string }
    >(
      'SELECT id, method, path, price_cents, discounts_json FROM endpoints WHERE api_id = ? AND removed_at IS NULL ORDER BY position',
    ),
    terms: db.prepare<[string], { id: string; acceptance_mode: string }>(
      "SELECT id, acceptance_mode FROM legal_documents WHERE api_id = ? AND status = 'activated' ORDER BY activated_at DESC, created_at DESC LIMIT 1",
    ),
    accepted: db.prepare<[string, string], { id: string }>(
      'SELECT id FROM terms_acceptances WHERE org_id = ? AND document_id = ?',
    ),
    monthCalls: db.prepare<[string, string, number], { n: number }>(
      'SELECT COUNT(*) AS n FROM usage_events WHERE org_id = ? AND endpoint_id = ? AND created_at >= ? AND charged_cents > 0',
    ),
  };
}
