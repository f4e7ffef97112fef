/**
 * The one error type of svc and the one table that maps each stable code to an HTTP status and title.
 * Every surface (control, gateway, MCP, CLI) turns failures into these codes at its edge; see docs/errors.md.
 */

export const CODES = {
  // 400
  validation_failed: { status: 400, title: 'Validation failed' },
  invalid_json: { status: 400, title: 'Request body is not valid JSON' },
  challenge_required: { status: 400, title: 'Bot challenge token required' },
  challenge_failed: { status: 400, title: 'Bot challenge token rejected' },
  invalid_code: { status: 400, title: 'Login code is wrong or expired' },
  invalid_token: { status: 400, title: 'Token is wrong, used or expired' },
  accept_terms_required: { status: 400, title: 'Terms must be accepted to publish' },
  url_not_allowed: { status: 400, title: 'URL not allowed' },
  path_not_allowed: { status: 400, title: 'Path parameter would leave the endpoint path' },
  webhook_signature_invalid: { status: 400, title: 'Webhook signature invalid' },
  invalid_grant: { status: 400, title: 'CLI login code is wrong, used, expired or does not match' },
  authorization_pending: { status: 400, title: 'CLI login not confirmed yet' },
  expired_token: { status: 400, title: 'CLI login expired' },
  // 401
  unauthorized: { status: 401, title: 'Missing or unknown credential' },
  api_key_required: { status: 401, title: 'An API key is required here, not a session token' },
  session_required: { status: 401, title: 'A session token is required here, not an API key' },
  // 402
  insufficient_credits: { status: 402, title: 'Insufficient credits' },
  budget_exceeded: { status: 402, title: 'Key budget exceeded' },
  per_call_cap_exceeded: { status: 402, title: 'Per-call cap exceeded' },
  daily_cap_exceeded: { status: 402, title: 'Daily cap exceeded' },
  price_above_max: { status: 402, title: 'Current price is above X-Svc-Max-Price-Cents' },
  card_required: { status: 402, title: 'A card on file is required' },
  // 403
  forbidden: { status: 403, title: 'Forbidden' },
  insufficient_scope: { status: 403, title: 'Credential lacks the required scope' },
  key_revoked: { status: 403, title: 'API key revoked' },
  org_suspended: { status: 403, title: 'Organization suspended' },
  free_only_key: { status: 403, title: 'This key may call free endpoints only' },
  cap_escalation: { status: 403, title: 'A capped key cannot give itself or another key more power' },
  csrf_failed: { status: 403, title: 'Form security token missing or wrong' },
  // 404
  not_found: { status: 404, title: 'Not found' },
  listing_not_found: { status: 404, title: 'No live listing with this slug' },
  endpoint_not_found: { status: 404, title: 'No endpoint of this listing matches' },
  // 405
  method_not_allowed: { status: 405, title: 'Method not allowed here' },
  // 409
  conflict: { status: 409, title: 'Conflict' },
  invalid_state: { status: 409, title: 'Not allowed in the current state' },
  idempotency_conflict: { status: 409, title: 'Idempotency-Key reused with a different request' },
  // 413 / 415 / 422 / 428 / 429 / 431
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  import_failed: { status: 422, title: 'API description could not be imported' },
  verification_failed: { status: 422, title: 'Upstream verification failed' },
  terms_not_accepted: { status: 428, title: 'Terms not accepted' },
  rate_limited: { status: 429, title: 'Too many requests' },
  too_many_attempts: { status: 429, title: 'Too many attempts' },
  headers_too_large: { status: 431, title: 'Request headers too large' },
  // 5xx
  internal: { status: 500, title: 'Internal error' },
  upstream_error: { status: 502, title: 'Upstream failed' },
  payment_backend_error: { status: 502, title: 'Payment processor failed' },
  unavailable: { status: 503, title: 'Service unavailable' },
  busy: { status: 503, title: 'Busy: too much work queued' },
  upstream_timeout: { status: 504, title: 'Upstream timed out' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof CODES;

import type { NextStep } from './next-step.js';

export interface FieldError {
  path: string;
  message: string;
}

export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  /** Seconds, sent as Retry-After for 429/503. */
  readonly retryAfter: number | undefined;
  /** Extra problem members (e.g. price_cents on a 402). Must not hold secrets. */
  readonly extra: Record<string, unknown> | undefined;
  /** What the caller can do about it, as data; each surface renders it in its own words (core/next-step.ts). */
  readonly next: NextStep | undefined;

  constructor(
    code: ErrorCode,
    detail?: string,
    opts: {
      errors?: FieldError[];
      retryAfter?: number;
      extra?: Record<string, unknown>;
      next?: NextStep;
      cause?: unknown;
    } = {},
  ) {
    // A refusal is an answer, not a bug: no stack is captured for it (the walk cost the gateway's 401 path about a
    // fifth of its CPU). An `internal` error keeps its stack; a wrapped failure keeps its own on `cause`.
    const limit = Error.stackTraceLimit;
    if (code !== 'internal') Error.stackTraceLimit = 0;
    try {
      super(detail ?? CODES[code].title, opts.cause === undefined ? undefined : { cause: opts.cause });
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = 'SvcError';
    this.code = code;
    this.detail = detail ?? CODES[code].title;
    this.errors = opts.errors;
    this.retryAfter = opts.retryAfter;
    this.extra = opts.extra;
    this.next = opts.next;
  }

  get status(): number {
    return CODES[this.code].status;
  }
}

export function isSvcError(e: unknown): e is SvcError {
  return e instanceof SvcError;
}
