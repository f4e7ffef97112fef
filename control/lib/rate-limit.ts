/** In-process fixed-window counters (per control-plane process), for register/login/import abuse limits. */
import type { Config } from '../../core/config.js';
import { SvcError } from '../../core/errors.js';

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

  /** `take`, throwing `rate_limited` with Retry-After when the window is full. */
  enforce(key: string, now: number, detail: (retryAfter: number) => string): void {
    const retryAfter = this.take(key, now);
    if (retryAfter > 0) throw new SvcError('rate_limited', detail(retryAfter), { retryAfter });
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

/** Every limiter of one control process, built once by createAppContext (not module state, so tests get fresh ones). */
export interface RateLimiters {
  /** POST /v1/register per client IP. */
  register: WindowLimiter;
  /** Web signup per client IP. */
  signupIp: WindowLimiter;
  /**
   * Verification mails per email address from POST /v1/auth/email (attach an email to an org). Not the login
   * codes: their per-email rule is counted in the database by the sessions service and is never a 429.
   */
  attachEmail: WindowLimiter;
  /** Login-code requests per client IP. */
  loginIp: WindowLimiter;
  /** Wrong login codes per client IP (control/auth/abuse-limits.ts counts failures only). */
  verifyFailIp: WindowLimiter;
  /** Catalog requests ("please list X") per org, or per IP when anonymous. */
  catalogRequests: WindowLimiter;
  /** OpenAPI imports per org: they fetch and parse documents (CPU and outbound HTTP). */
  imports: WindowLimiter;
}

export function createRateLimiters(config: Readonly<Config>): RateLimiters {
  return {
    register: new WindowLimiter(config.rateLimits.registerPerMin, 60_000),
    signupIp: new WindowLimiter(config.rateLimits.registerPerMin, 60_000),
    attachEmail: new WindowLimiter(config.rateLimits.loginPerHour, 3600_000),
    loginIp: new WindowLimiter(config.rateLimits.loginPerHour * 10, 3600_000),
    verifyFailIp: new WindowLimiter(config.rateLimits.loginPerHour * 6, 3600_000),
    catalogRequests: new WindowLimiter(10, 60_000),
    imports: new WindowLimiter(60, 60_000),
  };
}
