/** Prefixed, time-sortable ids (ULID-like: 10 chars of ms time + 14 random, Crockford base32). */
import { randomBytes, randomInt } from 'node:crypto';

const B32 = '0123456789abcdefghjkmnpqrstvwxyz';
const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export type IdPrefix =
  | 'org'
  | 'usr'
  | 'key'
  | 'ses'
  | 'lgc'
  | 'clc'
  | 'emv'
  | 'vrf'
  | 'api'
  | 'ep'
  | 'txn'
  | 'req'
  | 'doc'
  | 'acc'
  | 'lease'
  | 'gw'
  | 'pay'
  | 'chk'
  | 'po'
  | 'mail'
  | 'creq'
  | 'prc'
  | 'act'
  | 'prv'
  | 'bat'
  | 'oc'
  | 'ogr';

function timePart(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = B32[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

export function randomString(len: number, alphabet: string = B62): string {
  const bytes = randomBytes(len * 2);
  let out = '';
  // Rejection sampling keeps every character equally likely.
  const limit = 256 - (256 % alphabet.length);
  for (let i = 0; out.length < len; i++) {
    if (i >= bytes.length) return out + randomString(len - out.length, alphabet);
    const b = bytes[i]!;
    if (b < limit) out += alphabet[b % alphabet.length];
  }
  return out;
}

export function newId(prefix: IdPrefix, ms: number = Date.now()): string {
  return `${prefix}_${timePart(ms)}${randomString(14, B32)}`;
}

export function sixDigitCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}
