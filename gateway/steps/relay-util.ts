/** Small shared pieces of the relay: response header hygiene, header lookup, and the 402 wording. */
import type { ErrorCode } from '../../core/errors.js';
import type { Headers } from '../respond.js';
import { fieldValue } from '../../core/http1/response-parser.js';
import type { NextStep } from '../../core/next-step.js';

/** Bodies (requests and answers) up to this size are buffered whole rather than streamed. */
export const SMALL_BODY = 64 * 1024;

const DROP_RESPONSE = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'date',
  'trailer',
  'upgrade',
  'proxy-connection',
]);

/** A request or answer header's first value, '' when absent. */
export function header(h: Headers, name: string): string {
  return fieldValue(h, name) ?? '';
}

/** The upstream's answer headers a consumer gets: hop-by-hop, framing and X-Svc-* dropped (we set our own). */
export function responseHeaders(h: Headers): Headers {
  const out: Headers = [];
  for (const e of h) if (!DROP_RESPONSE.has(e[0]) && !e[0].startsWith('x-svc-')) out.push(e);
  return out;
}

export function capDetail(code: ErrorCode, price: number, headroom: number, verified: boolean): string {
  if (code === 'budget_exceeded')
    return `This call costs ${price} cents; the key's lifetime budget has ${headroom} cents left. Raise budget_cents with \`svc budget set --budget\` (PATCH /v1/keys/{id}).`;
  if (code === 'daily_cap_exceeded')
    return `This call costs ${price} cents; the key's daily cap has ${headroom} cents left today (UTC).`;
  const how = verified
    ? 'Buy credits with `svc billing checkout` (POST /v1/billing/checkout) or enable `svc billing auto-reload --enable`.'
    : 'An org may buy credits once its email is verified (`svc verify --email`), then with `svc billing checkout` (POST /v1/billing/checkout).';
  return `This call costs ${price} cents and your org has ${headroom} cents available. ${how}`;
}

/**
 * The server's next step for a gateway refusal (core/next-step.ts), from what the gateway knows: the listing's slug
 * and whether the org verified an email (buying credits needs one). Every surface renders this step; none guesses.
 */
export function refusalNext(code: ErrorCode, slug: string, verified: boolean): NextStep | undefined {
  switch (code) {
    case 'unauthorized':
      return { action: 'authenticate' };
    case 'key_revoked':
    case 'api_key_required':
      return { action: 'get_key' };
    case 'rate_limited':
      return { action: 'retry_later' };
    case 'listing_not_found':
      return { action: 'find_listing' };
    case 'endpoint_not_found':
      return { action: 'list_endpoints', slug };
    case 'terms_not_accepted':
      return { action: 'accept_terms', slug };
    case 'price_above_max':
      return { action: 'check_price', slug };
    case 'free_only_key':
      return { action: 'raise_cap', cap: 'approval_mode' };
    case 'per_call_cap_exceeded':
      return { action: 'raise_cap', cap: 'per_call' };
    case 'budget_exceeded':
      return { action: 'raise_cap', cap: 'budget' };
    case 'daily_cap_exceeded':
      return { action: 'raise_cap', cap: 'daily' };
    case 'insufficient_credits':
      return verified ? { action: 'buy_credits' } : { action: 'verify_email' };
    case 'card_required':
      return { action: 'add_card' };
    default:
      return undefined;
  }
}
