/**
 * Listings by slug (upstream, injection, decrypted secret, endpoint templates and prices, active terms),
 * loaded on a miss and dropped by the change feed on any 'api' or 'terms' change. On SQLite a miss loads
 * synchronously; on PostgreSQL (an `AsyncListingSource`, gateway/pg/lookups.ts) the pipeline awaits
 * `warm(…)` first, which loads the listing, the caller's terms acceptance and its month's call count (what
 * the checks after it read), and is null when all of that is cached.
 */
import type Sqlite from 'better-sqlite3';
import { decryptSecret } from '../../core/crypto.js';
import { parseDiscounts, type DiscountTier } from '../../core/discounts.js';
import { NotCachedError } from './key-cache.js';

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

export interface ApiRow {
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

export interface EndpointRow {
  id: string;
  method: string;
  path: string;
  price_cents: number;
  discounts_json: string;
}

export interface TermsRow {
  id: string;
  acceptance_mode: string;
}

/** Where a PostgreSQL gateway loads listings from on a miss (gateway/pg/lookups.ts). */
export interface AsyncListingSource {
  /** The listing's rows by slug (endpoints not removed, in position order), or undefined for no such slug. */
  listing(slug: string): Promise<{ api: ApiRow; endpoints: EndpointRow[]; terms: TermsRow | undefined } | undefined>;
  accepted(orgId: string, docId: string): Promise<boolean>;
  monthCalls(orgId: string, endpointId: string, monthStart: number): Promise<number>;
}

function isAsyncSource(s: Sqlite.Database | AsyncListingSource): s is AsyncListingSource {
  return typeof (s as AsyncListingSource).listing === 'function';
}

export class ListingCache {
  /** Lookups answered from memory, and those that went to the database (gateway metrics). */
  hits = 0;
  misses = 0;
  /** slug -> listing, or null for "no live listing" (negative entries dropped on any api change). */
  readonly #bySlug = new Map<string, Listing | null>();
  readonly #accepted = new Map<string, boolean>();
  readonly #monthCalls = new Map<string, number>();
  readonly #s: ReturnType<typeof _prepare> | null = null;
  readonly #source: AsyncListingSource | null = null;
  readonly #loading = new Map<string, Promise<void>>();
  /** Moved by every drop: a load that started before a drop does not cache what it read. */
  #gen = 0;

  constructor(
    source: Sqlite.Database | AsyncListingSource,
    private readonly secretKey: Buffer | null,
  ) {
    if (isAsyncSource(source)) this.#source = source;
    else this.#s = _prepare(source);
  }

  /** True when misses load asynchronously (PostgreSQL): callers await `warm` before the lookups. */
  get async(): boolean {
    return this.#source !== null;
  }

  /**
   * Null when `bySlug(slug)`, and for its matching endpoint `termsAccepted(orgId, …)` and
   * `monthCalls(orgId, …, monthStart)`, answer from memory now; otherwise a load to await before asking again.
   * `orgId` null: only the listing (metering off).
   */
  warm(slug: string, orgId: string | null, method: string, path: string, monthStart: number): Promise<void> | null {
    const src = this.#source;
    if (!src || !slug) return null;
    const listing = this.#bySlug.get(slug);
    if (listing === undefined) {
      this.misses++;
      return this.#track(`l:${slug}`, (fresh) =>
        src.listing(slug).then((rows) => {
          if (fresh()) this.#put(slug, rows ? this.#build(rows.api, rows.endpoints, rows.terms) : null);
        }),
      );
    }
    if (listing === null || orgId === null) return null;
    const doc = listing.requiredTermsDocId;
    if (doc !== null && listing.providerOrgId !== orgId && !this.#accepted.has(`${orgId}:${doc}`)) {
      return this.#track(`a:${orgId}:${doc}`, (fresh) =>
        src.accepted(orgId, doc).then((v) => {
          if (fresh()) this.#putAccepted(`${orgId}:${doc}`, v);
        }),
      );
    }
    const endpoint = matchEndpoint(listing, method, path);
    if (!endpoint || endpoint.tiers.length === 0 || endpoint.priceCents === 0) return null;
    const k = `${orgId}:${endpoint.id}:${monthStart}`;
    if (this.#monthCalls.has(k)) return null;
    return this.#track(`m:${k}`, (fresh) =>
      src.monthCalls(orgId, endpoint.id, monthStart).then((n) => {
        if (fresh()) this.#monthCalls.set(k, n);
      }),
    );
  }

  /** One load per key at a time; `fresh()` is false once a drop happened since it started (then it caches nothing). */
  #track(k: string, load: (fresh: () => boolean) => Promise<void>): Promise<void> {
    const busy = this.#loading.get(k);
    if (busy) return busy;
    const gen = this.#gen;
    const p = load(() => gen === this.#gen);
    this.#loading.set(k, p);
    const done = () => {
      if (this.#loading.get(k) === p) this.#loading.delete(k);
    };
    p.then(done, done);
    return p;
  }

  bySlug(slug: string): Listing | null {
    const hit = this.#bySlug.get(slug);
    if (hit !== undefined) {
      this.hits++;
      return hit;
    }
    if (!this.#s) throw new NotCachedError('listing not loaded (warm it first)');
    this.misses++;
    const listing = this.#load(slug);
    this.#put(slug, listing);
    return listing;
  }

  #put(slug: string, listing: Listing | null): void {
    if (this.#bySlug.size > 50_000) this.#bySlug.clear();
    this.#bySlug.set(slug, listing);
  }

  #putAccepted(k: string, v: boolean): void {
    if (this.#accepted.size > 100_000) this.#accepted.clear();
    this.#accepted.set(k, v);
  }

  termsAccepted(orgId: string, docId: string): boolean {
    const k = `${orgId}:${docId}`;
    let v = this.#accepted.get(k);
    if (v === undefined) {
      if (!this.#s) throw new NotCachedError('terms acceptance not loaded (warm it first)');
      v = this.#s.accepted.get(orgId, docId) !== undefined;
      this.#putAccepted(k, v);
    }
    return v;
  }

  /** Charged calls of this org to this endpoint this UTC month (for volume discounts); counted locally after load. */
  monthCalls(orgId: string, endpointId: string, monthStart: number): number {
    const k = `${orgId}:${endpointId}:${monthStart}`;
    let v = this.#monthCalls.get(k);
    if (v === undefined) {
      if (!this.#s) throw new NotCachedError('month call count not loaded (warm it first)');
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
    this.#gen++;
    // Map iteration tolerates deletes; negative (null) entries go too, since a new or re-published listing
    // announces itself only by its own api id.
    for (const [slug, l] of this.#bySlug) if (l === null || l.apiId === apiId) this.#bySlug.delete(slug);
  }

  dropTerms(apiId: string): void {
    this.dropApi(apiId);
    this.#accepted.clear();
  }

  clear(): void {
    this.#gen++;
    this.#bySlug.clear();
    this.#accepted.clear();
    this.#monthCalls.clear();
  }

  #load(slug: string): Listing | null {
    const s = this.#s!;
    const api = s.api.get(slug);
    if (!api || !isLive(api)) return null;
    return this.#build(api, s.endpoints.all(api.id), s.terms.get(api.id));
  }

  #build(api: ApiRow, endpointRows: readonly EndpointRow[], doc: TermsRow | undefined): Listing | null {
    if (!isLive(api) || !api.base_url) return null;
    let origin: string;
    let basePath: string;
    try {
      const u = new URL(api.base_url);
      origin = u.origin;
      basePath = u.pathname.replace(/\/+$/, '');
    } catch {
      return null;
    }
    const endpoints = endpointRows.map((e): EndpointRec => {
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

function isLive(api: ApiRow): boolean {
  return api.status === 'live' && api.suspended_at === null && !!api.base_url;
}

/**
 * A listing's templates by method, then by first path segment (templates that start with a `{param}` apart), each
 * list holding positions in `endpoints` (which is in match order: most literal segments first, then position). A
 * call's lookup scans two short lists, not every endpoint: a listing may have hundreds. Built once per listing
 * object, on its first call.
 */
interface MethodRoutes {
  byFirst: Map<string, number[]>;
  paramFirst: number[];
}
const ROUTES = new WeakMap<readonly EndpointRec[], Map<string, MethodRoutes>>();

function routesOf(endpoints: readonly EndpointRec[]): Map<string, MethodRoutes> {
  const known = ROUTES.get(endpoints);
  if (known) return known;
  const byMethod = new Map<string, MethodRoutes>();
  endpoints.forEach((e, rank) => {
    let m = byMethod.get(e.method);
    if (!m) {
      m = { byFirst: new Map(), paramFirst: [] };
      byMethod.set(e.method, m);
    }
    const first = e.segments[0];
    if (first === null || first === undefined) m.paramFirst.push(rank);
    else {
      const list = m.byFirst.get(first);
      if (list) list.push(rank);
      else m.byFirst.set(first, [rank]);
    }
  });
  ROUTES.set(endpoints, byMethod);
  return byMethod;
}

/** Up to this many endpoints a listing is scanned in order: cheaper than the index's lookups. */
const SCAN_ALL = 8;

/** Whether a template's segments fit the path's: a `{param}` (null) takes any non-empty segment. */
function fits(segs: readonly (string | null)[], parts: readonly string[]): boolean {
  if (segs.length !== parts.length) return false;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i];
    if (seg === null ? parts[i] === '' : seg !== parts[i]) return false;
  }
  return true;
}

/** The position of the first template in `ranks` (one method's list) that fits `parts`, or -1. */
function firstMatch(endpoints: readonly EndpointRec[], ranks: readonly number[] | undefined, parts: string[]): number {
  if (!ranks) return -1;
  for (const rank of ranks) if (fits(endpoints[rank]!.segments, parts)) return rank;
  return -1;
}

function findRoute(endpoints: readonly EndpointRec[], method: string, parts: string[]): EndpointRec | undefined {
  if (endpoints.length <= SCAN_ALL) {
    for (const e of endpoints) if (e.method === method && fits(e.segments, parts)) return e;
    return undefined;
  }
  const m = routesOf(endpoints).get(method);
  if (!m) return undefined;
  const literal = firstMatch(endpoints, m.byFirst.get(parts[0]!), parts);
  const param = firstMatch(endpoints, m.paramFirst, parts);
  const rank = literal < 0 ? param : param < 0 ? literal : Math.min(literal, param);
  return rank < 0 ? undefined : endpoints[rank];
}

/** The endpoint whose method and template match `path` (no query), or undefined. HEAD falls back to GET. */
export function matchEndpoint(listing: Listing, method: string, path: string): EndpointRec | undefined {
  const parts = path.split('/').slice(1);
  const eps = listing.endpoints;
  return findRoute(eps, method, parts) ?? (method === 'HEAD' ? findRoute(eps, 'GET', parts) : undefined);
}

function _prepare(db: Sqlite.Database) {
  return {
    api: db.prepare<[string], ApiRow>(
      'SELECT id, org_id, slug, base_url, status, suspended_at, secret_enc, injection, injection_name FROM apis WHERE slug = ?',
    ),
    endpoints: db.prepare<[string], EndpointRow>(
      'SELECT id, method, path, price_cents, discounts_json FROM endpoints WHERE api_id = ? AND removed_at IS NULL ORDER BY position',
    ),
    terms: db.prepare<[string], TermsRow>(
      "SELECT id, acceptance_mode FROM legal_documents WHERE api_id = ? AND status = 'activated' ORDER BY activated_at DESC, created_at DESC LIMIT 1",
    ),
    accepted: db.prepare<[string, string], { id: string }>(
      'SELECT id FROM terms_acceptances WHERE org_id = ? AND document_id = ?',
    ),
    monthCalls: db.prepare<[string, string, number], { n: number }>(
      `SELECT COUNT(*) AS n FROM usage_calls
       WHERE org_num = (SELECT num FROM id_nums WHERE id = ?) AND endpoint_num = (SELECT num FROM id_nums WHERE id = ?)
         AND created_at >= ? AND charged_cents > 0`,
    ),
  };
}
