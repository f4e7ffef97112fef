/** In-process fixed-window counters (per control-plane process), for register/login abuse limits. */
export class WindowLimiter {
  readonly #hits = new Map<string, { count: number; resetAt: number }>();
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** Returns 0 when allowed, else the seconds until the window resets. */
  take(key: string, now: number): number {
    let w = this.#hits.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + this.windowMs };
      this.#hits.set(key, w);
      if (this.#hits.size > 50_000) this.#sweep(now);
    }
    if (w.count >= this.limit) return Math.max(1, Math.ceil((w.resetAt - now) / 1000));
    w.count++;
    return 0;
  }

  /** Seconds until `key` may pass again without counting this look (0 = allowed): for limits on failures only. */
  blockedFor(key: string, now: number): number {
    const w = this.#hits.get(key);
    if (!w || w.resetAt <= now || w.count < this.limit) return 0;
    return Math.max(1, Math.ceil((w.resetAt - now) / 1000));
  }

  #sweep(now: number): void {
    for (const [k, w] of this.#hits) if (w.resetAt <= now) this.#hits.delete(k);
  }
}
