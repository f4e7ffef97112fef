/**
 * One metered call, start to finish: authenticate → rate limit → resolve listing/endpoint → terms, price and caps
 * → (quote) → idempotency claim → reserve from a lease → forward → settle (group commit) → answer.
 * Plain async code over a ClientSink, so nothing here knows uWS; see gateway/README.md for the money rules.
 */
import { hash } from 'node:crypto';
import type { UpstreamPool } from './upstream/pool.js';
import { SvcError, type ErrorCode } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import { utcDay } from '../core/clock.js';
import type { GatewayConfig } from './config.js';
import type { KeyCache, KeyRecord } from './cache/key-cache.js';
import type { ListingCache } from './cache/listing-cache.js';
import type { Lease, ReserveOutcome } from './leases.js';
import type { SettleRecord } from './settle-writer.js';
import type { TermsRefusalSink } from './terms-refusals.js';
import type { ClaimOutcome } from './idempotency.js';
import type { ClaimStore, LeaseStore, SettleStore } from './store.js';
import type { KeyRateLimiter } from './rate-limiter.js';
import type { ClientSink, Headers } from './respond.js';
import { authenticate, keyHashOf } from './steps/authenticate.js';
import { checkCall, monthStartOf, parseMaxPrice, priceOf, resolveListing, type Resolved } from './steps/checks.js';
import { SMALL_BODY, capDetail, header, refusalNext, responseHeaders } from './steps/relay-util.js';
import { passThrough } from './steps/pass-through.js';
import { forward, type ForwardRequest } from './steps/forward.js';
import { quote } from './steps/quote.js';
import { RequestBody, collectBody } from './request-body.js';
import { isBusy, retryWhileBusy } from './no-wait.js';
import { isEgressRefusal } from '../core/egress.js';

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

/** What a consumer may learn about an upstream failure: its kind, never the provider's host or port. */
export function upstreamFailureKind(err: Error | undefined): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? (err?.cause as NodeJS.ErrnoException)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'EUPSTREAM_CLOSED') return 'connection reset';
  if (code === 'EUPSTREAM_PROTOCOL')
    return (err as Error & { reason?: string }).reason?.startsWith('closed_')
      ? 'connection reset'
      : 'invalid HTTP answer';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return 'TLS handshake failed';
  return 'network error';
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

export class Pipeline {
  constructor(private readonly d: PipelineDeps) {}

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
    if (isQuote) return quote(d, sink, p.requestId, key, auth.org.emailVerified, resolved, price, refusal, now);
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
    this.#forward(p, sink, key, resolved, path, price, lease, day, idemKey, ids);
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

  #forward(
    p: ProxyRequest,
    sink: ClientSink,
    key: KeyRecord,
    resolved: Resolved,
    path: string,
    price: number,
    lease: Lease | null,
    day: number,
    idemKey: string,
    ids: Headers,
  ): void {
    const d = this.d;
    const t0 = d.clock.now();
    const freq: ForwardRequest = {
      method: p.method,
      path,
      query: p.query,
      headers: p.headers,
      body: p.body,
      requestId: p.requestId,
    };
    const rec = (status: number, charged: number, errorCode: string | null): SettleRecord => ({
      requestId: p.requestId,
      orgId: key.orgId,
      keyId: key.keyId,
      apiId: resolved.listing.apiId,
      endpointId: resolved.endpoint.id,
      providerOrgId: resolved.listing.providerOrgId,
      method: p.method,
      status,
      latencyMs: d.clock.now() - t0,
      priceCents: price,
      chargedCents: charged,
      errorCode,
      createdAt: d.clock.now(),
      leaseId: charged > 0 && lease ? lease.id : null,
      day,
    });
    let reservationOpen = price > 0 && lease !== null;
    const giveBack = () => {
      if (reservationOpen && lease) d.leases.cancel(lease, price);
      reservationOpen = false;
    };
    const settled = (r: SettleRecord): Promise<number> => {
      // The writer's onCommitted moved the reservation into lease.spent; on failure it is still ours to cancel.
      if (r.chargedCents > 0) reservationOpen = false;
      else giveBack();
      const pr = d.writer.settle(r);
      if (r.chargedCents > 0 && lease) pr.catch(() => d.leases.cancel(lease!, price));
      if (r.chargedCents > 0) d.listings.countCall(key.orgId, resolved.endpoint.id, monthStartOf(t0));
      return pr;
    };
    const svcHeaders = (charged: number, balance: number): Headers => [
      ...ids,
      ['x-svc-charged-cents', String(charged)],
      ['x-svc-balance-cents', String(balance)],
    ];
    const failInternal = (e: unknown) => {
      if (idemKey) d.idem.abandon(key.orgId, idemKey, p.requestId);
      sink.problem(
        new SvcError('internal', 'The call could not be recorded; it was not charged.', { cause: e }),
        p.requestId,
        ids,
      );
    };

    let status = 0;
    let upHeaders: Headers = [];
    let buffered: Buffer[] = [];
    let mode: 'buffer' | 'stream' = 'buffer';
    let started = false;
    let endPending = false;
    let finished = false;
    /** Stream mode: the charge is committed or committing; no second usage record may follow. */
    let charging = false;
    let brokeMidStream = false;

    const abort = forward(d.upstream, resolved.listing, freq, d.cfg.maxResponseBytes, {
      start: (st, headers, len, ctrl) => {
        status = st;
        upHeaders = responseHeaders(headers);
        const failed = st >= 500;
        if (idemKey || failed || (len !== null && len <= SMALL_BODY) || sink.isHead) return; // buffer, settle at end
        if (sink.aborted) return;
        mode = 'stream';
        // Streamed bodies are charged when the upstream's headers arrive; the answer starts after the commit.
        ctrl.pause();
        charging = true;
        settled(rec(st, price, null)).then(
          (balance) => {
            if (sink.aborted) return abort(new Error('client gone'));
            if (endPending && !brokeMidStream) {
              // The whole (chunked) body arrived during the commit: one write with a Content-Length.
              sink.send(st, [...upHeaders, ...svcHeaders(price, balance)], Buffer.concat(buffered));
              buffered = [];
              return;
            }
            sink.begin(st, [...upHeaders, ...svcHeaders(price, balance)]);
            started = true;
            for (const c of buffered) sink.write(c);
            buffered = [];
            // Charged at headers (documented): a body that broke during the commit ends the connection early.
            if (brokeMidStream) sink.close();
            else if (endPending) sink.end();
            else ctrl.resume();
          },
          (e) => {
            abort(new Error('settle failed'));
            failInternal(e);
          },
        );
      },
      data: (chunk, ctrl) => {
        if (!started) {
          buffered.push(chunk);
          if (mode === 'buffer' && idemKey && buffered.reduce((n, b) => n + b.length, 0) > d.cfg.idempotentBodyMax) {
            abort(new Error('too large for replay'));
            this.#upstreamFailed(
              sink,
              p,
              'error',
              rec,
              settled,
              giveBack,
              ids,
              idemKey,
              key,
              'The upstream answer is too large to store for Idempotency-Key replay; nothing was charged.',
            );
          }
          return;
        }
        if (!sink.write(chunk)) {
          ctrl.pause();
          sink.onWritable(() => ctrl.resume());
        }
      },
      end: () => {
        finished = true;
        if (mode === 'stream') {
          if (started) sink.end();
          else endPending = true;
          return;
        }
        if (sink.aborted) {
          giveBack();
          if (idemKey) d.idem.abandon(key.orgId, idemKey, p.requestId);
          void settled(rec(499, 0, 'client_aborted')).catch(() => undefined);
          return;
        }
        const failed = status >= 500;
        const charged = failed ? 0 : price;
        // One chunk (the usual small answer) goes out as is: Buffer.concat would copy it.
        const body = buffered.length === 1 ? buffered[0]! : Buffer.concat(buffered);
        buffered = [];
        const r = rec(status, charged, failed ? 'upstream_status' : null);
        if (idemKey) {
          if (failed) d.idem.abandon(key.orgId, idemKey, p.requestId);
          else
            r.idempotency = {
              orgId: key.orgId,
              idemKey,
              status,
              headersJson: JSON.stringify([...upHeaders, ['x-svc-price-cents', String(price)]]),
              body,
            };
        }
        settled(r).then(
          (balance) => sink.send(status, [...upHeaders, ...svcHeaders(charged, balance)], body),
          failInternal,
        );
      },
      fail: (kind, err) => {
        if (started) return sink.close();
        if (charging) {
          brokeMidStream = true;
          return;
        }
        if (finished) return;
        finished = true;
        this.#upstreamFailed(
          sink,
          p,
          kind,
          rec,
          settled,
          giveBack,
          ids,
          idemKey,
          key,
          kind === 'too_large'
            ? 'The upstream answer exceeds the gateway size limit; nothing was charged.'
            : isEgressRefusal(err)
              ? "The upstream's address is not a public address (egress rule, docs/security.md); nothing was charged."
              : undefined,
          err,
        );
      },
    });
    sink.onAbort(() => {
      if (charging) return abort(new Error('client aborted'));
      if (!started && !finished) {
        finished = true;
        abort(new Error('client aborted'));
        giveBack();
        if (idemKey) d.idem.abandon(key.orgId, idemKey, p.requestId);
        void settled(rec(499, 0, 'client_aborted')).catch(() => undefined);
      }
    });
  }

  #upstreamFailed(
    sink: ClientSink,
    p: ProxyRequest,
    kind: 'timeout' | 'error' | 'too_large',
    rec: (s: number, c: number, e: string | null) => SettleRecord,
    settled: (r: SettleRecord) => Promise<number>,
    giveBack: () => void,
    ids: Headers,
    idemKey: string,
    key: KeyRecord,
    detail?: string,
    err?: Error,
  ): void {
    giveBack();
    if (idemKey) this.d.idem.abandon(key.orgId, idemKey, p.requestId);
    if (p.body instanceof RequestBody && p.body.overflow) {
      const tooBig = new SvcError('payload_too_large', 'Request body exceeds the gateway limit; nothing was charged.');
      const drained = p.body.overflow.done;
      const answer = () =>
        drained.then((complete) =>
          sink.problem(tooBig, p.requestId, [
            ...ids,
            ['x-svc-charged-cents', '0'],
            ...(complete ? [] : ([['connection', 'close']] as Headers)),
          ]),
        );
      settled(rec(413, 0, 'payload_too_large')).then(answer, answer);
      return;
    }
    const code: ErrorCode = kind === 'timeout' ? 'upstream_timeout' : 'upstream_error';
    if (err) this.d.onUpstreamFailure?.(splitSlug(p.url).slug, p.requestId, err);
    const svcErr = new SvcError(
      code,
      detail ??
        (kind === 'timeout'
          ? 'The upstream API did not answer in time; nothing was charged.'
          : `The upstream API failed (${upstreamFailureKind(err)}); nothing was charged.`),
    );
    settled(rec(svcErr.status, 0, code)).then(
      () => sink.problem(svcErr, p.requestId, [...ids, ['x-svc-charged-cents', '0']]),
      () => sink.problem(svcErr, p.requestId, [...ids, ['x-svc-charged-cents', '0']]),
    );
  }
}
