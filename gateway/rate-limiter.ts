/**
 * Per-key fixed one-minute windows in this process; with N holders each enforces ceil(limit / N). On one host N
 * is the worker count; on PostgreSQL with many hosts it is the fleet's live holder count (a function, refreshed
 * by the worker), Kong's `local` strategy: no shared counter on the call path. Guarantee: the fleet admits at most
 * N × ceil(limit / N) < limit + N calls per key and minute, whatever the routing; a key whose calls all reach one
 * holder gets ceil(limit / N) (docs/scale-out.md, "Rate limits").
 */
export class KeyRateLimiter {
  readonly #win = new Map<string, { count: number; resetAt: number }>();
  readonly #shares: () => number;

  constructor(shares: number | (() => number)) {
    this.#shares = typeof shares === 'number' ? () => shares : shares;
  }

  /** 0 when allowed, else whole seconds until the window resets (Retry-After). */
  take(keyId: string, perMinute: number, now: number): number {
    let w = this.#win.get(keyId);
    if (!w || w.resetAt <= now) {
      if (this.#win.size > 100_000) this.#win.clear();
      w = { count: 0, resetAt: now + 60_000 };
      this.#win.set(keyId, w);
    }
    if (w.count >= Math.ceil(perMinute / Math.max(1, this.#shares())))
      return Math.max(1, Math.ceil((w.resetAt - now) / 1000));
    w.count++;
    return 0;
  }
}
