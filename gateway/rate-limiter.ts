/** Per-key fixed one-minute windows in this process; with N workers each enforces ceil(limit / N). */
export class KeyRateLimiter {
  readonly #win = new Map<string, { count: number; resetAt: number }>();

  constructor(private readonly workers: number) {}

  /** 0 when allowed, else whole seconds until the window resets (Retry-After). */
  take(keyId: string, perMinute: number, now: number): number {
    let w = this.#win.get(keyId);
    if (!w || w.resetAt <= now) {
      if (this.#win.size > 100_000) this.#win.clear();
      w = { count: 0, resetAt: now + 60_000 };
      this.#win.set(keyId, w);
    }
    if (w.count >= Math.ceil(perMinute / this.workers)) return Math.max(1, Math.ceil((w.resetAt - now) / 1000));
    w.count++;
    return 0;
  }
}
