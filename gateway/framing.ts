/**
 * Request framing rules (RFC 9112) the gateway enforces on what its HTTP server hands the request handler: the
 * method, the number of header lines, `Transfer-Encoding` and `Content-Length`. One function, called by the one
 * request handler (server.ts) whichever HTTP server runs (native uWS or the JavaScript fallback), so both refuse the
 * same requests the same way. What uWS refuses before any handler runs is listed in docs/security.md.
 */
import { SvcError } from '../core/errors.js';
import type { Headers } from './respond.js';

/** The methods an endpoint can have (OpenAPI's operations); any other method is refused with 405. */
export const RELAYED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const;
const RELAYED = new Set<string>(RELAYED_METHODS);
const ALLOW = RELAYED_METHODS.join(', ');

/** The most header lines a request may carry (uWS 20.30's compiled-in count; the fallback server uses the same). */
export const MAX_HEADER_LINES = 48;

/** Content-Length values past 15 digits (about 1 PB) are refused as malformed, like any non-digit value. */
const CONTENT_LENGTH = /^[0-9]{1,15}$/;

export type Framing =
  /** `contentLength` is -1 when none was sent; `chunked` when `Transfer-Encoding: chunked` was. */
  | { ok: true; contentLength: number; chunked: boolean }
  /** Refuse with `error`, add `headers`, and close the connection: the rest of the bytes cannot be framed. */
  | { ok: false; error: SvcError; headers: Headers };

function invalid(header: string, message: string): Framing {
  return {
    ok: false,
    error: new SvcError('validation_failed', message, { errors: [{ path: `header:${header}`, message }] }),
    headers: [],
  };
}

/**
 * Reads and checks a request's framing. `method` is upper case; `headers` are the request's header lines as the
 * server parsed them (lower-case names, repeats kept, in order).
 */
export function checkFraming(method: string, headers: Headers): Framing {
  if (!RELAYED.has(method))
    return {
      ok: false,
      error: new SvcError('method_not_allowed', `The gateway relays ${ALLOW}; not this method.`),
      headers: [['allow', ALLOW]],
    };
  if (headers.length > MAX_HEADER_LINES)
    return {
      ok: false,
      error: new SvcError('headers_too_large', `Requests may carry at most ${MAX_HEADER_LINES} header lines.`),
      headers: [],
    };
  let contentLength = -1;
  let badLength = false;
  let codings: string | null = null;
  for (const [k, v] of headers) {
    if (k === 'content-length') {
      // RFC 9112 §6.3: differing or malformed Content-Length values make the framing unknowable (smuggling).
      const n = CONTENT_LENGTH.test(v) ? Number(v) : Number.NaN;
      if (Number.isNaN(n) || (contentLength !== -1 && n !== contentLength)) badLength = true;
      contentLength = n;
    } else if (k === 'transfer-encoding') codings = codings === null ? v : `${codings}, ${v}`;
  }
  if (codings !== null) {
    // RFC 9112 §6.1 and §6.3: a request's only framing coding is a single final `chunked` (names are
    // case-insensitive); any other coding, `chunked` applied twice, or a Content-Length beside it is refused, since a
    // server before or behind us could read the body's end differently (request smuggling).
    if (codings.trim().toLowerCase() !== 'chunked')
      return invalid('Transfer-Encoding', 'Transfer-Encoding must be exactly `chunked`, sent once.');
    if (contentLength !== -1 || badLength)
      return invalid('Transfer-Encoding', 'Send Content-Length or Transfer-Encoding: chunked, not both.');
    return { ok: true, contentLength: -1, chunked: true };
  }
  if (badLength)
    return invalid(
      'Content-Length',
      'Content-Length must be one decimal value of at most 15 digits (sent once, or repeated with the same value).',
    );
  return { ok: true, contentLength, chunked: false };
}

/**
 * uWS 20.30 closes the connection right after the handler returns when it cannot parse the Content-Length itself,
 * dropping an answer still in its 16 KiB cork buffer. A framing refusal's body is padded with JSON whitespace past
 * that buffer, so uWS writes it to the socket at once, before it closes.
 */
export const FRAMING_ANSWER_PAD = 16 * 1024;
