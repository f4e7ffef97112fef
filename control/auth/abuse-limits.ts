/**
 * Per-process abuse limits for registration, signup and login, shared by the REST routes and the web pages so a
 * person (or a bot) gets one budget whichever surface it uses. Fixed windows from config (docs/identity.md).
 */
import type { AppContext } from '../context.js';

export type AbuseLimit = 'register' | 'signupIp' | 'loginEmail' | 'loginIp';

/**
 * Counts one attempt for `key` (an IP or an email) on the context's limiter, the same one the REST routes use;
 * throws `rate_limited` with Retry-After when over the limit.
 */
export function takeAbuseLimit(ctx: Pick<AppContext, 'limiters' | 'clock'>, which: AbuseLimit, key: string): void {
  ctx.limiters[which].enforce(key, ctx.clock.now(), (s) => `Too many requests; retry in ${s} s`);
}
