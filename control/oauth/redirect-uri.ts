/**
 * Redirect URI rules (OAuth 2.1 §2.3.1, RFC 8252): exact string match, except that an http loopback IP literal may
 * differ in port (native apps bind an ephemeral one). Registered URIs are https, http on loopback, or a private-use
 * scheme of a native app; never a fragment or a script-capable scheme.
 */
import { hasUserInfo } from '../../core/link-url.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'about:', 'blob:']);

/** Why the URI cannot be registered, or null when it can. */
export function redirectUriProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `not an absolute URI: ${raw.slice(0, 100)}`;
  }
  if (url.hash || raw.includes('#')) return 'a redirect URI must not have a fragment';
  if (hasUserInfo(raw)) return 'a redirect URI must not contain a user name or password (https://name@host)';
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `the ${url.protocol} scheme is not allowed`;
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname))
    return 'http redirect URIs must use a loopback host (127.0.0.1, [::1] or localhost); use https';
  return null;
}

export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  let req: URL;
  try {
    req = new URL(requested);
  } catch {
    return false;
  }
  if (req.protocol !== 'http:' || (req.hostname !== '127.0.0.1' && req.hostname !== '[::1]')) return false;
  return registered.some((r) => {
    const reg = new URL(r);
    return (
      reg.protocol === 'http:' &&
      reg.hostname === req.hostname &&
      reg.pathname === req.pathname &&
      reg.search === req.search
    );
  });
}
