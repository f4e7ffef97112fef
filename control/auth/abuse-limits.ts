/**
 * Per-process abuse limits for registration, signup and login, shared by the REST routes and the web pages so a
 * person (or a bot) gets one budget whichever surface it uses. Fixed windows from config (docs/identity.md).
 */
import type { AppContext } from '../context.js';
import { SvcError } from '../lib/errors.js';
import { WindowLimiter } from '../lib/rate-limit.js';

export type AbuseLimit = 'register' | 'signupIp' | 'loginEmail' | 'loginIp' | 'verifyFailIp';

// Created lazily from config on first use; one set per process.
let limiters: Record<AbuseLimit, WindowLimiter> | undefined;

function _limiter(ctx: Pick<AppContext, 'config'>, which: AbuseLimit): WindowLimiter {
  const { config } = ctx;
  limiters ??= {
    register: new WindowLimiter(config.rateLimits.registerPerMin, 60_000),
    signupIp: new WindowLimiter(config.rateLimits.registerPerMin, 60_000),
    loginEmail: new WindowLimiter(config.rateLimits.loginPerHour, 3600_000),
    loginIp: new WindowLimiter(config.rateLimits.loginPerHour * 10, 3600_000),
    verifyFailIp: new WindowLimiter(config.rateLimits.loginPerHour * 6, 3600_000),
  };
  return limiters[which];
}

function _tooMany(retryAfter: number): SvcError {
  return new SvcError('rate_limited', `Too many requests; retry in ${retryAfter} s`, { retryAfter });
}

/** Counts one attempt for `key` (an IP or an email); throws `rate_limited` with Retry-After when over the limit. */
export function takeAbuseLimit(ctx: Pick<AppContext, 'config' | 'clock'>, which: AbuseLimit, key: string): void {
  const retryAfter = _limiter(ctx, which).take(key, ctx.clock.now());
  if (retryAfter > 0) throw _tooMany(retryAfter);
}

/**
 * Runs a login-code check under the per-address limit on wrong codes (guessing across many emails); per code, the
 * sessions service burns a code after 5 wrong guesses. Only failures count, so a person's own logins never do.
 */
export async function withLoginVerifyLimit<T>(
  ctx: Pick<AppContext, 'config' | 'clock'>,
  ip: string,
  verify: () => Promise<T>,
): Promise<T> {
  const failures = _limiter(ctx, 'verifyFailIp');
  const blocked = failures.blockedFor(ip, ctx.clock.now());
  if (blocked > 0) throw _tooMany(blocked);
  try {
    return await verify();
  } catch (e) {
    if (e instanceof SvcError && (e.code === 'invalid_code' || e.code === 'too_many_attempts'))
      failures.take(ip, ctx.clock.now());
    throw e;
  }
}
