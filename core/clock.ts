/** Time is integer milliseconds UTC behind a Clock, so tests can freeze or move it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const DAY_MS = 86_400_000;

/** UTC day number (days since epoch) of a ms timestamp: the unit of daily caps. */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/**
 * A clock that honours SVC_CLOCK_OFFSET_FILE in development/test: the file holds an integer ms offset,
 * re-read at most every 200 ms. Lets integration tests move time in a running process (pricing notice periods).
 */
import { readFileSync } from 'node:fs';
export function offsetClock(file: string | undefined): Clock {
  if (!file) return systemClock;
  let offset = 0;
  let readAt = 0;
  return {
    now() {
      const real = Date.now();
      if (real - readAt > 200) {
        readAt = real;
        try {
          offset = Number.parseInt(readFileSync(file, 'utf8').trim(), 10) || 0;
        } catch {
          offset = 0;
        }
      }
      return real + offset;
    },
  };
}
