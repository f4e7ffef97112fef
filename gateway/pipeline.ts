/**
 * One metered call, start to finish: authenticate → rate limit → resolve listing/endpoint → terms, price and caps
 * → (quote) → idempotency claim → reserve from a lease → forward → settle (group commit) → answer.
 * Plain async code over a ClientSink, so nothing here knows uWS; see gateway/README.md for the money rules.
 */
import { hash } from 'node:crypto';
import type { UpstreamPool } from '../core/http1/pool.js';
import { SvcError, type ErrorCode } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import { utcDay } from '../core/clock.js';
import type { GatewayConfig } from './config.js';
import type { KeyCache, KeyRecord } from './cache/key-cache.js';
import type { ListingCache } from './cache/listing-cache.js';
import type { Lease, ReserveOutcome } from './leases.js';
import type { TermsRefusalSink } from './terms-refusals.js';
import type { ClaimOutcome } from './idempotency.js';
import type { ClaimStore, LeaseStore, SettleStore } from './store.js';
import type { KeyRateLimiter } from './rate-limiter.js';
import type { ClientSink, Headers } from './respond.js';
import { authenticate, keyHashOf } from './steps/authenticate.js';
import { checkCall, monthStartOf, parseMaxPrice, priceOf, resolveListing, type Resolved } from './steps/checks.js';
import { capDetail, header, refusalNext } from './steps/relay-util.js';
import { passThrough } from './steps/pass-through.js';
import { forward, type ForwardRequest } from './steps/forward.js';
import { quote } from './steps/quote.js';
import { RequestBody, collectBody } from './request-body.js';
import { isBusy, retryWhileBusy } from './no-wait.js';
import { PaidCall, type PaidCallOptions } from './paid-call.js';

export interface ProxyRequest {
  method: string;
  /** Path including the slug, e.g. /weather/forecast/7 */
  url: string;
  query: string;
  headers: Headers;
  /** Small bodies arrive whole; large or chunked ones stream (RequestBody). */
  body: Buffer | RequestBody | null;
  requestId: string;
}

export interface PipelineDeps {
  cfg: Readonly<GatewayConfig>;
  clock: Clock;
  keys: KeyCache;
  listings: ListingCache;
  leases: LeaseStore;
  writer: SettleStore;
  idem: ClaimStore;
  limiter: KeyRateLimiter;
  upstream: UpstreamPool;
  /** Ask other processes to hand back this org's unused lease slices (writes a 'org' change). */
  signalPressure(orgId: string): void;
  /** Where 428 terms refusals are recorded for the dashboard (gateway/terms-refusals.ts); none in unit tests. */
  termsRefusals?: TermsRefusalSink;
  /** Where the upstream's own failure (host, port, errno) goes: the operator's log, never the consumer's answer. */
  onUpstreamFailure?(slug: string, requestId: string, err: Error): void;
}

export function splitSlug(url: string): { slug: string; path: string } {
  const i = url.indexOf('/', 1);
  return i < 0 ? { slug: url.slice(1), path: '/' } : { slug: url.slice(1, i), path: url.slice(i) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Awaits a cache's loads until it answers from memory (null); false when the database cannot be read or a
 * change kept arriving during every load (bounded: four loads).
 */
async function warmed(load: () => Promise<void> | null): Promise<boolean> {
  try {
    for (let i = 0; i < 4; i++) {
      const w = load();
      if (w === null) return true;
      await w;
    }
    return load() === null;
  } catch {
    return false;
  }
}

/** The priced, reserved call as #forward takes it: what PaidCall needs beyond the request, and the path. */
type ForwardOptions = Omit<PaidCallOptions, 'deps' | 'sink' | 'method' | 'requestId' | 'body' | 'resolved'> & {
  resolved: Resolved;
  path: string;
};

export class Pipeline {
  constructor(private readonly d: PipelineDeps) {}

  // Long: every check of a paid call in the order it runs, without an extra async hop per call.
  async handle(p: ProxyRequest, sink: ClientSink): Promise<void> {
    const isQuote = p.url.startsWith('/_quote/');
    const { slug, path } = splitSlug(isQuote ? p.url.slice(7) : p.url);
    const d = this.d;
    const ids: Headers = [['x-svc-request-id', p.requestId]];
    const refuse = (code: ErrorCode, detail: string, opts?: ConstructorParameters<typeof SvcError>[2]) =>
      sink.problem(new SvcError(code, detail, opts), p.requestId, ids);
    const unreachable = () =>
      refuse(
        'unavailable',
        'The gateway cannot read its database right now; the call was not charged. Retry shortly.',
        {
          retryAfter: 1,
        },
      );
    if (!d.cfg.metering) {
      if (d.listings.async && !(await warmed(() => d.listings.warm(slug, null, p.method, path, 0))))
        return unreachable();
      return passThrough(d, p, slug, path, sink);
    }

    const authorization = header(p.headers, 'authorization');
    const xSvcKey = header(p.headers, 'x-svc-key');
    // PostgreSQL: a key, org or listing not in memory is one awaited round trip before the synchronous checks.
    if (d.keys.async) {
      const h = keyHashOf(authorization, xSvcKey);
      if (h !== null && !(await warmed(() => d.keys.warm(h)))) return unreachable();
    }
    const auth = authenticate(authorization, xSvcKey, d.keys);
    if (!auth.ok) return refuse(auth.code, auth.detail, { next: refusalNext(auth.code, slug, false) });
    const key = auth.key;
    const now = d.clock.now();
    const wait = d.limiter.take(key.keyId, key.rateLimitPerMin ?? d.cfg.defaultRatePerMin, now);
    if (wait > 0)
      return refuse('rate_limited', `Rate limit of this key reached; retry in ${wait} s.`, {
        retryAfter: wait,
        next: { action: 'retry_later' },
      });
    if (d.listings.async && !(await warmed(() => d.listings.warm(slug, key.orgId, p.method, path, monthStartOf(now)))))
      return unreachable();
    const resolved = resolveListing(d.listings, slug, p.method, path);
    const verified = auth.org.emailVerified;
    if (!resolved.ok)
      return refuse(resolved.code, resolved.detail, { next: refusalNext(resolved.code, slug, verified) });
    // HEAD is charged as its GET: its headers are the provider's data too (docs/gateway.md "What is charged").
    const price = priceOf(d.listings, key.orgId, resolved.endpoint, now);
    ids.push(['x-svc-price-cents', String(price)]);
    const maxPrice = parseMaxPrice(p.headers);
    if (maxPrice !== null && typeof maxPrice === 'object') {
      const message = `X-Svc-Max-Price-Cents ${maxPrice.invalid}.`;
      const path = 'header:X-Svc-Max-Price-Cents';
      return sink.problem(
        new SvcError('validation_failed', message, { errors: [{ path, message }] }),
        p.requestId,
        ids,
      );
    }
    const refusal = checkCall(d.listings, key, resolved, price, maxPrice);
    if (isQuote) return quote(d, sink, { requestId: p.requestId, key, verified, resolved, price, refusal, now });
    if (refusal) {
      if (refusal.code === 'terms_not_accepted' && resolved.listing.requiredTermsDocId !== null)
        d.termsRefusals?.record(key.orgId, resolved.listing.apiId, resolved.listing.requiredTermsDocId, now);
      return refuse(refusal.code, refusal.detail, {
        extra: refusal.extra,
        next: refusalNext(refusal.code, resolved.listing.slug, verified),
      });
    }

    const idemKey = header(p.headers, 'idempotency-key');
    if (idemKey && p.body instanceof RequestBody) {
      try {
        p.body = await collectBody(p.body);
      } catch {
        return refuse('payload_too_large', 'Request body exceeds the gateway limit.');
      }
    }
    if (idemKey) {
      const replayed = await this.#claimIdempotency(p, sink, key, slug, path, idemKey);
      if (replayed) return;
    }
    const day = utcDay(now);
    let lease: Lease | null = null;
    if (price > 0) {
      let r: ReserveOutcome;
      try {
        r = await this.#reserve(key, day, price, sink);
      } catch (e) {
        // Nothing was reserved or charged: free the idempotency claim so a retry of this call can run.
        if (idemKey) d.idem.abandon(key.orgId, idemKey, p.requestId);
        if (sink.aborted) return;
        throw e;
      }
      if (!r.ok) {
        if (idemKey) d.idem.abandon(key.orgId, idemKey, p.requestId);
        if (sink.aborted) return;
        // An org without a verified email cannot buy credits yet: verifying is the step before any checkout.
        return refuse(r.code, capDetail(r.code, price, r.headroom, verified), {
          extra: { price_cents: price, available_cents: r.headroom },
          next: refusalNext(r.code, resolved.listing.slug, verified),
        });
      }
      lease = r.lease;
    }
    this.#forward(p, sink, { key, resolved, path, price, lease, day, idemKey, ids });
  }

  async #reserve(key: KeyRecord, day: number, price: number, sink: ClientSink): Promise<ReserveOutcome> {
    // Bounded by time, not attempts: a busy sibling may take a few polls to hand its slices back.
    const deadline = Date.now() + 3_000;
    const lockDeadline = Date.now() + this.d.cfg.lockWaitMs;
    for (;;) {
      const r = await retryWhileBusy(
        () => this.d.leases.reserve(key, day, price, this.d.clock.now()),
        lockDeadline,
        () => sink.aborted,
      );
      if (r.ok || !r.othersHold || Date.now() > deadline || sink.aborted) return r;
      // Another process holds unspent slices of this org: ask for them back, then retry.
      this.d.signalPressure(key.orgId);
      await sleep(this.d.cfg.pollMs + 20);
    }
  }

  /** True when the call was answered from (or refused by) an existing idempotency record. */
  async #claimIdempotency(
    p: ProxyRequest,
    sink: ClientSink,
    key: KeyRecord,
    slug: string,
    path: string,
    idemKey: string,
  ): Promise<boolean> {
    const d = this.d;
    const bodyHash = Buffer.isBuffer(p.body) ? hash('sha256', p.body, 'hex') : '';
    const reqHash = hash('sha256', `${p.method} /${slug}${path}?${p.query}\n${bodyHash}`, 'hex');
    const deadline = Date.now() + d.cfg.headersTimeoutMs + 5_000;
    const now = () => d.clock.now();
    for (;;) {
      let c: ClaimOutcome;
      try {
        c = await d.idem.claim(key.orgId, idemKey, reqHash, p.requestId, now);
      } catch (e) {
        // The client left while the claim waited for the lock: nothing was claimed, nobody to answer.
        if (isBusy(e) && sink.aborted) return true;
        throw e;
      }
      if (c.kind === 'new') {
        if (!sink.aborted) return false;
        // The client left while the claim was committing: free the key, nothing was forwarded or charged.
        d.idem.abandon(key.orgId, idemKey, p.requestId);
        return true;
      }
      if (c.kind === 'conflict') {
        sink.problem(
          new SvcError(
            'idempotency_conflict',
            'This Idempotency-Key was used for a different request in the last 24 h.',
          ),
          p.requestId,
          [['x-svc-request-id', p.requestId]],
        );
        return true;
      }
      if (c.kind === 'replay') {
        sink.send(
          c.status,
          [
            ...c.headers,
            ['x-svc-request-id', c.requestId],
            ['x-svc-charged-cents', '0'],
            ['x-svc-idempotent-replay', 'true'],
          ],
          c.body,
        );
        return true;
      }
      // The first call is still in flight (here or in another process): wait for its outcome.
      if (sink.aborted) return true;
      if (Date.now() > deadline) {
        sink.problem(
          new SvcError('conflict', 'The first call with this Idempotency-Key is still in flight.'),
          p.requestId,
          [['x-svc-request-id', p.requestId]],
        );
        return true;
      }
      await sleep(25);
    }
  }

  /** Starts the upstream call; from here on the call's own state machine (paid-call.ts) owns it. */
  #forward(p: ProxyRequest, sink: ClientSink, o: ForwardOptions): void {
    const call = new PaidCall({ deps: this.d, sink, method: p.method, requestId: p.requestId, body: p.body, ...o });
    const req: ForwardRequest = {
      method: p.method,
      path: o.path,
      query: p.query,
      headers: p.headers,
      body: p.body,
      requestId: p.requestId,
    };
    call.attach(forward(this.d.upstream, o.resolved.listing, req, this.d.cfg.maxResponseBytes, call));
  }
}
