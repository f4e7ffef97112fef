/**
 * OAuth endpoints answer RFC 6749 §5.2 error JSON (`{ error, error_description }`), not problem+json, because OAuth
 * clients parse that shape. The `error` values are the RFC's stable snake_case codes (see docs/errors.md).
 */
import type { Context } from 'hono';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'slow_down'
  | 'server_error';

const STATUS: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  slow_down: 429,
  server_error: 500,
};

export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly description: string;
  /** Seconds, sent as Retry-After with `slow_down`. */
  readonly retryAfter: number | undefined;

  constructor(error: OAuthErrorCode, description: string, opts: { retryAfter?: number } = {}) {
    super(description);
    this.name = 'OAuthError';
    this.error = error;
    this.description = description;
    this.retryAfter = opts.retryAfter;
  }

  get status(): number {
    return STATUS[this.error] ?? 400;
  }
}

/** The JSON error body every OAuth endpoint answers with; `request_id` is svc's extension member. */
export function oauthErrorResponse(c: Context, err: OAuthError): Response {
  const requestId = (c.get('requestId') as string | undefined) ?? 'req_unknown';
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'x-svc-request-id': requestId,
  };
  if (err.status === 401) headers['www-authenticate'] = 'Basic realm="svc-oauth"';
  if (err.retryAfter !== undefined) headers['retry-after'] = String(err.retryAfter);
  return new Response(JSON.stringify({ error: err.error, error_description: err.description, request_id: requestId }), {
    status: err.status,
    headers,
  });
}
