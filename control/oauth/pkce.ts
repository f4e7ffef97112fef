/** PKCE (RFC 7636), S256 only: OAuth 2.1 clients must use it, and `plain` would let a stolen code be redeemed. */
import { createHash, timingSafeEqual } from 'node:crypto';

const CHALLENGE_RE = /^[A-Za-z0-9_-]{43}$/;
const VERIFIER_RE = /^[A-Za-z0-9._~-]{43,128}$/;

/** An S256 challenge is the unpadded base64url of a sha256: exactly 43 characters. */
export function isS256Challenge(challenge: string): boolean {
  return CHALLENGE_RE.test(challenge);
}

export function isCodeVerifier(verifier: string): boolean {
  return VERIFIER_RE.test(verifier);
}

export function verifyS256(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
