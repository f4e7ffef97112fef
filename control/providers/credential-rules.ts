/**
 * What an upstream secret and its injection name may be: the gateway writes them into the upstream request, so a
 * secret with CR/LF/NUL (header splitting, or every call failing) or a header name that controls routing or
 * framing (Host, Transfer-Encoding, Content-Length, hop-by-hop, svc's own X-Svc-*) is refused when stored.
 */
import { SvcError, type FieldError } from '../../core/errors.js';
import type { Injection } from '../../core/db/database.js';
import { hasControlCharacters } from '../../core/link-url.js';

const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'cookie',
  'forwarded',
  'via',
]);

export function assertInjectable(secret: string, injection: Injection, name: string | undefined): void {
  const errors: FieldError[] = [];
  if (hasControlCharacters(secret))
    errors.push({ path: 'secret', message: 'must not contain control characters (CR, LF, NUL, tab…)' });
  if (injection === 'header' && name !== undefined) {
    const n = name.toLowerCase();
    if (RESERVED_HEADERS.has(n) || n.startsWith('x-svc-') || n.startsWith('x-forwarded-'))
      errors.push({
        path: 'injection_name',
        message: `${name} is a header the gateway or the HTTP framing controls; pick another name`,
      });
  }
  if (errors.length > 0)
    throw new SvcError('validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });
}
