/**
 * Per-process abuse limits for registration, signup, login and OpenAPI imports, shared by the REST routes and the
 * web pages so a person (or a bot) gets one budget whichever surface it uses. Fixed windows from config (docs/identity.md), held
 * in the AppContext (control/lib/rate-limit.ts).
 */
import type { AppContext } from '../context.js';
import { SvcError } from '../../core/errors.js';

export type AbuseLimit = 'register' | 'signupIp' | 'attachEmail' | 'loginIp' | 'verifyFailIp';

function _tooMany(retryAfter: number): SvcError {
  return new SvcError('rate_limited', `Too many requests; retry in ${retryAfter} s`, { retryAfter });
}

/** Counts one attempt for `key` (an IP or an email); throws `rate_limited` with Retry-After when over the limit. */
export function takeAbuseLimit(ctx: Pick<AppContext, 'limiters' | 'clock'>, which: AbuseLimit, key: string): void {
  const retryAfter = ctx.limiters[which].take(key, ctx.clock.now());
  if (retryAfter > 0) throw _tooMany(retryAfter);
}

/**
 * Runs a login-code check under the per-address limit on wrong codes (guessing across many emails); per code, the
 * sessions service burns a code after 5 wrong guesses. Only failures count, so a person's own logins never do.
 */
export async function withLoginVerifyLimit<T>(
  ctx: Pick<AppContext, 'limiters' | 'clock'>,
  ip: string,
  verify: () => Promise<T>,
): Promise<T> {
  const failures = ctx.limiters.verifyFailIp;
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

/** Counts one OpenAPI import (create or re-import) for the org; throws `rate_limited` when over the per-org limit. */
export function takeImport(ctx: Pick<AppContext, 'limiters' | 'clock'>, orgId: string): void {
  ctx.limiters.imports.enforce(
    orgId,
    ctx.clock.now(),
    () => 'Too many imports for this organization; try again shortly',
  );
}
