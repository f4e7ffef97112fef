/** Prefixed, time-sortable ids (ULID-like: 10 chars of ms time + 14 random, Crockford base32). */
import { randomFillSync, randomInt } from 'node:crypto';

const B32 = '0123456789abcdefghjkmnpqrstvwxyz';
const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export type IdPrefix =
  | 'org'
  | 'whe'
  | 'evt'
  | 'whd'
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

/**
 * Random bytes are drawn from the CSPRNG a 4 KiB block at a time and each byte is used once: one getrandom call
 * (and one Buffer) per id was a twentieth of a small request's CPU on the control plane.
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

function randomByte(): number {
  if (poolOffset === POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

export function randomString(len: number, alphabet: string = B62): string {
  let out = '';
  // Rejection sampling keeps every character equally likely.
  const limit = 256 - (256 % alphabet.length);
  while (out.length < len) {
    const b = randomByte();
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
