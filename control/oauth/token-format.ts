/** OAuth token formats: opaque random strings with a recognisable prefix; only their sha256 is stored. */
import { randomString } from '../../core/ids.js';
import { sha256Hex } from '../../core/crypto.js';

export const ACCESS_TOKEN_PREFIX = 'svc_at_';
export const REFRESH_TOKEN_PREFIX = 'svc_rt_';
const BODY_LENGTH = 43;
const ACCESS_RE = /^svc_at_[0-9A-Za-z]{43}$/;

/** Lets a resource server (the MCP process) tell an OAuth access token from an `svc_live_` key before any lookup. */
export function isAccessTokenFormat(token: string): boolean {
  return ACCESS_RE.test(token);
}

export function mintOAuthSecret(prefix: string): { plaintext: string; hash: string } {
  const plaintext = prefix + randomString(BODY_LENGTH);
  return { plaintext, hash: sha256Hex(plaintext) };
}

/** Authorization codes have no prefix a client must parse; they are 43 random characters. */
export function mintAuthorizationCode(): { plaintext: string; hash: string } {
  return mintOAuthSecret('');
}
