/**
 * The paid path after the reservation, one object per call with one `state` field: each event (the upstream's
 * headers, a body chunk, its end, its failure, the client's abort, the settle commit done or failed) is one method,
 * and an event that does not belong to the current state is ignored. Every call that reaches here settles exactly
 * one usage record; the reservation is moved to `spent` by that commit (a charge) or cancelled (no charge).
 *
 * - `awaiting_headers`: headers → `buffering` (small, 5xx, HEAD, Idempotency-Key: settled at the end) or
 *   `committing` (streamed: charged now); failure → `refunding`; client abort → `done` (a 499 record).
 * - `buffering`: chunk held (past the replay cap → `refunding`); end → `settling`; failure → `refunding`;
 *   client abort → `done` (a 499 record).
 * - `committing`: chunk held; end → `committing_ended`; failure → `committing_broken`; client abort stops the
 *   upstream (the charge stands); commit done → `streaming`; commit failed → `done` (500, not charged).
 * - `committing_ended` / `committing_broken`: commit done → `done` (the whole answer in one write / what arrived,
 *   then the connection closed); commit failed → `done` (500, not charged).
 * - `streaming`: chunk relayed (with backpressure); end → `done`; failure → `done` (connection closed); client
 *   abort → `done` (upstream stopped).
 * - `settling`: commit done → `done` (the answer, with the balance); commit failed → `done` (500, not charged).
 * - `refunding`: commit done or failed → `done` (the 502/504/413 problem, not charged).
 *
 * The money rules are docs/gateway.md "What is charged"; streamed bodies are charged when the headers arrive.
 */
import { SvcError } from '../core/errors.js';
import { isEgressRefusal } from '../core/egress.js';
import type { Clock } from '../core/clock.js';
import type { KeyRecord } from './cache/key-cache.js';
import type { EndpointRec, Listing, ListingCache } from './cache/listing-cache.js';
import type { GatewayConfig } from './config.js';
import type { Lease } from './leases.js';
import { RequestBody } from './request-body.js';
import type { ClientSink, Headers } from './respond.js';
import type { SettleRecord } from './settle-writer.js';
import { monthStartOf } from './steps/checks.js';
import type { UpstreamSink } from './steps/forward.js';
import { SMALL_BODY, responseHeaders } from './steps/relay-util.js';
import type { ClaimStore, LeaseStore, SettleStore } from './store.js';
import type { UpstreamController } from '../core/http1/call.js';

export type PaidCallState =
  | 'awaiting_headers'
  | 'buffering'
  | 'committing'
  | 'committing_ended'
  | 'committing_broken'
  | 'streaming'
  | 'settling'
  | 'refunding'
  | 'done';

/** What a paid call touches; PipelineDeps has all of it, a unit test passes fakes. */
export interface PaidCallDeps {
  cfg: Pick<GatewayConfig, 'idempotentBodyMax'>;
  clock: Clock;
  writer: Pick<SettleStore, 'settle'>;
  leases: Pick<LeaseStore, 'cancel'>;
  idem: Pick<ClaimStore, 'abandon'>;
  listings: Pick<ListingCache, 'countCall'>;
  onUpstreamFailure?(slug: string, requestId: string, err: Error): void;
}

export interface PaidCallOptions {
  deps: PaidCallDeps;
  sink: ClientSink;
  method: string;
  requestId: string;
  /** The request body: an overflowing stream turns an upstream failure into 413. */
  body: Buffer | RequestBody | null;
  key: Pick<KeyRecord, 'orgId' | 'keyId'>;
  resolved: { listing: Pick<Listing, 'apiId' | 'providerOrgId' | 'slug'>; endpoint: Pick<EndpointRec, 'id'> };
  /** The price after discounts; 0 for a free endpoint. */
  price: number;
  /** Where `price` is reserved (null when free). */
  lease: Lease | null;
  day: number;
  /** '' when the call has none. */
  idemKey: string;
  /** The X-Svc-* headers every answer of this call carries (request id, price). */
  ids: Headers;
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

const noAbort = (_reason: Error): void => undefined;

export class PaidCall implements UpstreamSink {
  state: PaidCallState = 'awaiting_headers';
  readonly #o: PaidCallOptions;
  readonly #t0: number;
  /** The reservation is still ours to cancel (no settle has taken it over yet). */
  #reserved: boolean;
  #abortUpstream: (reason: Error) => void = noAbort;
  #ctrl: UpstreamController | null = null;
  #status = 0;
  #upHeaders: Headers = [];
  /** Body chunks not yet sent to the client (buffered answer, or arrived while the charge commits). */
  #held: Buffer[] = [];
  #heldBytes = 0;
  /** The answer `refunding` gives once its record is written. */
  #problem: SvcError | null = null;

  constructor(o: PaidCallOptions) {
    this.#o = o;
    this.#t0 = o.deps.clock.now();
    this.#reserved = o.price > 0 && o.lease !== null;
    o.sink.onAbort(() => this.clientAborted());
  }

  /** The upstream call was started (steps/forward.ts); `abort` stops it. */
  attach(abort: (reason: Error) => void): void {
    this.#abortUpstream = abort;
  }

  /** Event: the upstream's status and headers. */
  start(status: number, headers: Headers, contentLength: number | null, ctrl: UpstreamController): void {
    if (this.state !== 'awaiting_headers') return;
    const o = this.#o;
    this.#status = status;
    this.#upHeaders = responseHeaders(headers);
    this.#ctrl = ctrl;
    const small = contentLength !== null && contentLength <= SMALL_BODY;
    if (o.idemKey || status >= 500 || small || o.sink.isHead || o.sink.aborted) {
      this.state = 'buffering'; // settled at the end, with the whole answer
      return;
    }
    // Streamed bodies are charged when the upstream's headers arrive; the answer starts after the commit.
    this.state = 'committing';
    ctrl.pause();
    this.#settle(this.#record(status, o.price, null));
  }

  /** Event: a chunk of the upstream's body. */
  data(chunk: Buffer, ctrl: UpstreamController): void {
    const s = this.state;
    if (s === 'streaming') {
      if (!this.#o.sink.write(chunk)) {
        ctrl.pause();
        this.#o.sink.onWritable(() => ctrl.resume());
      }
      return;
    }
    if (s !== 'buffering' && s !== 'committing') return;
    this.#held.push(chunk);
    this.#heldBytes += chunk.length;
    if (s === 'buffering' && this.#o.idemKey && this.#heldBytes > this.#o.deps.cfg.idempotentBodyMax) {
      this.#abortUpstream(new Error('too large for replay'));
      this.#refund(
        'error',
        'The upstream answer is too large to store for Idempotency-Key replay; nothing was charged.',
      );
    }
  }

  /** Event: the upstream's body ended. */
  end(): void {
    const s = this.state;
    if (s === 'streaming') {
      this.state = 'done';
      this.#o.sink.end();
    } else if (s === 'committing') this.state = 'committing_ended';
    else if (s === 'buffering') this.#answerBuffered();
  }

  /** Event: the upstream failed (connection, protocol, timeout, or over the size cap). */
  fail(kind: 'timeout' | 'error' | 'too_large', err: Error): void {
    const s = this.state;
    if (s === 'streaming') {
      this.state = 'done';
      this.#o.sink.close();
    } else if (s === 'committing') this.state = 'committing_broken';
    else if (s === 'awaiting_headers' || s === 'buffering') {
      const detail =
        kind === 'too_large'
          ? 'The upstream answer exceeds the gateway size limit; nothing was charged.'
          : isEgressRefusal(err)
            ? "The upstream's address is not a public address (egress rule, docs/security.md); nothing was charged."
            : undefined;
      this.#refund(kind, detail, err);
    }
  }

  /** Event: the client went away. */
  clientAborted(): void {
    switch (this.state) {
      case 'awaiting_headers':
      case 'buffering':
        this.#abortUpstream(new Error('client aborted'));
        this.#drop();
        break;
      case 'committing':
      case 'committing_ended':
      case 'committing_broken':
        // The charge is committing: it stands; the upstream is stopped and commitDone answers nobody.
        this.#abortUpstream(new Error('client aborted'));
        break;
      case 'streaming':
        this.state = 'done';
        this.#abortUpstream(new Error('client aborted'));
        break;
      default: // settling (the answer was complete: charged), refunding, done
    }
  }

  /** Event: this call's usage record committed; `balance` is the org's credit after it. */
  commitDone(balance: number): void {
    const s = this.state;
    if (s === 'refunding') this.#answerProblem();
    else if (s === 'settling') {
      this.state = 'done';
      const charged = this.#status >= 500 ? 0 : this.#o.price;
      this.#o.sink.send(this.#status, this.#answerHeaders(charged, balance), this.#takeBody());
    } else if (s === 'committing' || s === 'committing_ended' || s === 'committing_broken') this.#charged(s, balance);
  }

  /** The charge for a streamed answer committed: start the answer with what arrived meanwhile. */
  #charged(s: 'committing' | 'committing_ended' | 'committing_broken', balance: number): void {
    const sink = this.#o.sink;
    this.state = 'done';
    if (sink.aborted) {
      this.#abortUpstream(new Error('client gone'));
      return;
    }
    const headers = this.#answerHeaders(this.#o.price, balance);
    // The whole (chunked) body arrived during the commit: one write with a Content-Length.
    if (s === 'committing_ended') {
      sink.send(this.#status, headers, this.#takeBody());
      return;
    }
    sink.begin(this.#status, headers);
    for (const c of this.#held) sink.write(c);
    this.#held = [];
    // Charged at headers (documented): a body that broke during the commit ends the connection early.
    if (s === 'committing_broken') sink.close();
    else {
      this.state = 'streaming';
      this.#ctrl?.resume();
    }
  }

  /** Event: this call's usage record could not be committed: nothing was charged. */
  commitFailed(err: unknown): void {
    const s = this.state;
    if (s === 'refunding') {
      this.#answerProblem();
      return;
    }
    if (s === 'committing' || s === 'committing_ended' || s === 'committing_broken')
      this.#abortUpstream(new Error('settle failed'));
    else if (s !== 'settling') return;
    this.state = 'done';
    const o = this.#o;
    if (o.idemKey) this.#abandonClaim();
    o.sink.problem(
      new SvcError('internal', 'The call could not be recorded; it was not charged.', { cause: err }),
      o.requestId,
      o.ids,
    );
  }

  /** The buffered answer is complete: record it (charged unless 5xx), answer once committed. */
  #answerBuffered(): void {
    const o = this.#o;
    if (o.sink.aborted) {
      this.#drop();
      return;
    }
    this.state = 'settling';
    const failed = this.#status >= 500;
    const r = this.#record(this.#status, failed ? 0 : o.price, failed ? 'upstream_status' : null);
    if (o.idemKey) {
      if (failed) this.#abandonClaim();
      else {
        // One chunk (the usual small answer) is kept as is: Buffer.concat would copy it.
        const body = this.#takeBody();
        this.#held = [body];
        r.idempotency = {
          orgId: o.key.orgId,
          idemKey: o.idemKey,
          status: this.#status,
          headersJson: JSON.stringify([...this.#upHeaders, ['x-svc-price-cents', String(o.price)]]),
          body,
        };
      }
    }
    this.#settle(r);
  }

  /** The client left before an answer was due: not charged, recorded as 499. */
  #drop(): void {
    this.state = 'done';
    this.#held = [];
    this.#giveBack();
    if (this.#o.idemKey) this.#abandonClaim();
    this.#settle(this.#record(499, 0, 'client_aborted'));
  }

  /** The upstream failed before an answer was due: not charged, recorded, then answered 502/504 (413 on overflow). */
  #refund(kind: 'timeout' | 'error' | 'too_large', detail?: string, err?: Error): void {
    const o = this.#o;
    this.state = 'refunding';
    this.#held = [];
    this.#giveBack();
    if (o.idemKey) this.#abandonClaim();
    let problem: SvcError;
    if (o.body instanceof RequestBody && o.body.overflow)
      problem = new SvcError('payload_too_large', 'Request body exceeds the gateway limit; nothing was charged.');
    else {
      if (err) o.deps.onUpstreamFailure?.(o.resolved.listing.slug, o.requestId, err);
      problem = new SvcError(
        kind === 'timeout' ? 'upstream_timeout' : 'upstream_error',
        detail ??
          (kind === 'timeout'
            ? 'The upstream API did not answer in time; nothing was charged.'
            : `The upstream API failed (${upstreamFailureKind(err)}); nothing was charged.`),
      );
    }
    this.#problem = problem;
    this.#settle(this.#record(problem.status, 0, problem.code));
  }

  #answerProblem(): void {
    const o = this.#o;
    const problem = this.#problem;
    this.state = 'done';
    if (problem === null) return;
    const headers: Headers = [...o.ids, ['x-svc-charged-cents', '0']];
    if (!(o.body instanceof RequestBody && o.body.overflow)) {
      o.sink.problem(problem, o.requestId, headers);
      return;
    }
    // An overflowing upload: answer once the rest of it was read (or close, if it would not stop).
    void o.body.overflow.done.then((complete) =>
      o.sink.problem(problem, o.requestId, complete ? headers : [...headers, ['connection', 'close']]),
    );
  }

  /** Hands the record to the writer; its outcome comes back as commitDone / commitFailed. */
  #settle(r: SettleRecord): void {
    const o = this.#o;
    const charged = r.chargedCents > 0;
    // A charge's commit moves the reservation into lease.spent (the writer's onCommitted); otherwise give it back.
    if (charged) this.#reserved = false;
    else this.#giveBack();
    if (charged) o.deps.listings.countCall(o.key.orgId, o.resolved.endpoint.id, monthStartOf(this.#t0));
    o.deps.writer.settle(r).then(
      (balance) => this.commitDone(balance),
      (e: unknown) => {
        // The commit failed: the reservation is still in lease.inflight, ours to cancel.
        if (charged && o.lease) o.deps.leases.cancel(o.lease, o.price);
        this.commitFailed(e);
      },
    );
  }

  #giveBack(): void {
    const o = this.#o;
    if (this.#reserved && o.lease) o.deps.leases.cancel(o.lease, o.price);
    this.#reserved = false;
  }

  #abandonClaim(): void {
    this.#o.deps.idem.abandon(this.#o.key.orgId, this.#o.idemKey, this.#o.requestId);
  }

  #takeBody(): Buffer {
    const h = this.#held;
    this.#held = [];
    const only = h.length === 1 ? h[0] : undefined;
    return only ?? Buffer.concat(h);
  }

  /** The upstream's headers (already a copy: responseHeaders) followed by this call's X-Svc-* headers. */
  #answerHeaders(charged: number, balance: number): Headers {
    const h = this.#upHeaders;
    for (const e of this.#o.ids) h.push(e);
    h.push(['x-svc-charged-cents', String(charged)], ['x-svc-balance-cents', String(balance)]);
    return h;
  }

  #record(status: number, charged: number, errorCode: string | null): SettleRecord {
    const o = this.#o;
    const now = o.deps.clock.now();
    return {
      requestId: o.requestId,
      orgId: o.key.orgId,
      keyId: o.key.keyId,
      apiId: o.resolved.listing.apiId,
      endpointId: o.resolved.endpoint.id,
      providerOrgId: o.resolved.listing.providerOrgId,
      method: o.method,
      status,
      latencyMs: now - this.#t0,
      priceCents: o.price,
      chargedCents: charged,
      errorCode,
      createdAt: now,
      leaseId: charged > 0 && o.lease ? o.lease.id : null,
      day: o.day,
    };
  }
}
