/** Hashing of stored secrets (keys, tokens, codes) and AES-256-GCM for upstream secrets at rest. */
import { createCipheriv, createDecipheriv, createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** SHA-256 hex. `crypto.hash` is the one-shot fast path (~1 µs for a key). */
export function sha256Hex(s: string): string {
  return hash('sha256', s, 'hex');
}

export function safeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** Short non-reversible fingerprint shown instead of a stored secret. */
export function fingerprint(secret: string): string {
  return 'sha256:' + createHash('sha256').update(secret).digest('hex').slice(0, 12);
}

/** Encrypt with a 32-byte key: output is base64(iv[12] | tag[16] | ciphertext), versioned `v1:`. */
export function encryptSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return 'v1:' + Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64');
}

export function decryptSecret(key: Buffer, stored: string): string {
  if (!stored.startsWith('v1:')) throw new Error('unknown secret format');
  const raw = Buffer.from(stored.slice(3), 'base64');
  const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
}
