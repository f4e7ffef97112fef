/**
 * Hot-path ids with the same shape as core/ids.ts (`prefix_` + 10 chars of ms time + 14 chars), but
 * without a getrandom syscall per id: 6 random chars drawn once per process, then an 8-char counter.
 * Unique per process by the counter, across processes by the random tag; still time-sortable.
 */
import { randomString } from '../core/ids.js';
import type { IdPrefix } from '../core/ids.js';

const B32 = '0123456789abcdefghjkmnpqrstvwxyz';
const TAG = randomString(6, B32);
let counter = Math.floor(Math.random() * 1_000_000);
let lastMs = -1;
let lastTime = '';

function _timePart(ms: number): string {
  if (ms === lastMs) return lastTime;
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = B32[t % 32] + out;
    t = Math.floor(t / 32);
  }
  lastMs = ms;
  lastTime = out;
  return out;
}

export function fastId(prefix: IdPrefix, ms: number = Date.now()): string {
  counter = (counter + 1) % 1_099_511_627_776; // 32^8
  let c = '';
  let n = counter;
  for (let i = 0; i < 8; i++) {
    c = B32[n % 32] + c;
    n = Math.floor(n / 32);
  }
  return `${prefix}_${_timePart(ms)}${TAG}${c}`;
}
