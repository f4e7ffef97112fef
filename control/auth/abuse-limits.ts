/**
 * Per-process abuse limits for registration, signup and login, shared by the REST routes and the web pages so a
 * person (or a bot) gets one budget whichever surface it uses. Fixed windows from config (docs/identity.md).
 */
import type { AppContext } from '../context.js';
import { SvcError } from '../lib/errors.js';
import { WindowLimiter } from '../lib/rate-limit.js';

export type AbuseLimit = 'register' | 'signupIp' | 'loginEmail' | 'loginIp';

// Created lazily from config on first use; one set per process.
let limiters: Record<AbuseLimit, WindowLimiter> | undefined;

/** Counts one attempt for `key` (an IP or an email); throws `rate_limited` with Retry-After when over the limit. */
export function takeAbuseLimit(ctx: Pick<AppContext, 'config' | 'clock'>, which: AbuseLimit, key: string): void {
  const { config, clock } = ctx;
  limiters ??= {
    register: new WindowLimiter(config.rateLimits.registerPerMin, 60_000),
    signupIp: new WindowLimiter(config.rateLimits.registerPerMin, 60_000),
    loginEmail: new WindowLimiter(config.rateLimits.loginPerHour, 3600_000),
    loginIp: new WindowLimiter(config.rateLimits.loginPerHour * 10, 3600_000),
  };
  const retryAfter = limiters[which].take(key, clock.now());
  if (retryAfter > 0) throw new SvcError('rate_limited', `Too many requests; retry in ${retryAfter} s`, { retryAfter });
}
