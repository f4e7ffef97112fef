/** API key and session token formats, shared by control and gateway. Plaintext is shown once; only sha256 is kept. */
import { randomString } from './ids.js';
import { sha256Hex } from './crypto.js';

export const KEY_PREFIX = 'svc_live_';
export const KEY_BODY_LENGTH = 24;
export const SESSION_PREFIX = 'sess_';
const KEY_RE = /^svc_live_[0-9A-Za-z]{24}$/;

export function isApiKeyFormat(s: string): boolean {
  return s.length === KEY_PREFIX.length + KEY_BODY_LENGTH && KEY_RE.test(s);
}

export function isSessionTokenFormat(s: string): boolean {
  return s.startsWith(SESSION_PREFIX) && s.length > SESSION_PREFIX.length;
}

export interface MintedSecret {
  plaintext: string;
  hash: string;
  /** Display prefix, e.g. `svc_live_AbCd`. */
  start: string;
}

export function mintApiKey(): MintedSecret {
  const plaintext = KEY_PREFIX + randomString(KEY_BODY_LENGTH);
  return { plaintext, hash: sha256Hex(plaintext), start: plaintext.slice(0, KEY_PREFIX.length + 4) };
}

export function mintSessionToken(): MintedSecret {
  const plaintext = SESSION_PREFIX + randomString(40);
  return { plaintext, hash: sha256Hex(plaintext), start: plaintext.slice(0, SESSION_PREFIX.length + 4) };
}

/** `Authorization: Bearer <token>`; returns undefined when absent or malformed. */
export function bearerToken(header: string | undefined | null): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}
