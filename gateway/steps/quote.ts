/**
 * Free quotes: `{METHOD} /_quote/{slug}/{path}` answers the current price of that call and whether every check
 * (terms, max price, free-only, per-call cap, budget, daily cap, credits) would pass, without calling upstream,
 * reserving or charging anything.
 */
import { utcDay } from '../../core/clock.js';
import type { KeyRecord } from '../cache/key-cache.js';
import type { PipelineDeps } from '../pipeline.js';
import type { ClientSink } from '../respond.js';
import type { Refusal, Resolved } from './checks.js';
import { capDetail } from './relay-util.js';
import type { PeekOutcome } from '../store.js';

/** A priced call's quote: who asks, for what, and what the synchronous checks said. */
export interface QuoteRequest {
  requestId: string;
  key: KeyRecord;
  /** The org verified an email (buying credits needs one: the wording of a 402). */
  verified: boolean;
  resolved: Resolved;
  price: number;
  refusal: Refusal | null;
  now: number;
}

/** Synchronous on SQLite; on PostgreSQL the headroom read is awaited (a promise is returned then). */
export function quote(d: PipelineDeps, sink: ClientSink, q: QuoteRequest): void | Promise<void> {
  if (q.refusal === null && q.price > 0) {
    const peek = d.leases.peek(q.key, utcDay(q.now), q.price);
    if (peek instanceof Promise) return peek.then((p) => answerQuote(sink, q, p));
    return answerQuote(sink, q, peek);
  }
  return answerQuote(sink, q, null);
}

function answerQuote(sink: ClientSink, q: QuoteRequest, peek: PeekOutcome | null): void {
  const { requestId, verified, resolved, price, refusal } = q;
  let ok = refusal === null;
  let code: string | null = refusal?.code ?? null;
  // Every refusal carries its detail, whichever check made it (the same words the call itself would get).
  let detail: string | null = refusal?.detail ?? null;
  let available: number | null = null;
  if (ok && peek) {
    available = peek.headroom;
    if (!peek.ok) {
      ok = false;
      code = peek.code;
      detail = capDetail(peek.code, price, peek.headroom, verified);
    }
  }
  const body = {
    slug: resolved.listing.slug,
    endpoint_id: resolved.endpoint.id,
    method: resolved.endpoint.method,
    price_cents: price,
    base_price_cents: resolved.endpoint.priceCents,
    would_pass: ok,
    code,
    detail,
    available_cents: available,
  };
  sink.send(
    200,
    [
      ['content-type', 'application/json'],
      ['x-svc-request-id', requestId],
      ['x-svc-price-cents', String(price)],
      ['x-svc-charged-cents', '0'],
    ],
    JSON.stringify(body),
  );
}
