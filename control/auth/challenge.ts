/**
 * Bot-challenge verification for web signup (Turnstile-style `siteverify`): POST secret + response token,
 * expect JSON `{ success: boolean }`. Required in production; skipped in development when no token is sent.
 */

/** Turnstile's documented test-widget answer: the one token development accepts without a verifier secret. */
export const DEV_CHALLENGE_TOKEN = 'XXXX.DUMMY.TOKEN.XXXX';
import { SvcError } from '../../core/errors.js';
import type { Config } from '../../core/config.js';

export async function verifyChallenge(
  config: Readonly<Config>,
  token: string | undefined,
  remoteIp: string | undefined,
): Promise<void> {
  if (!token) {
    if (config.isProduction) {
      throw new SvcError(
        'challenge_required',
        'Signup needs a bot-challenge token in `challenge_token` (the web signup page provides one)',
      );
    }
    return;
  }
  if (!config.challenge.secret) {
    if (config.isProduction)
      throw new SvcError('unavailable', 'Signup challenge verification is not configured (SVC_CHALLENGE_SECRET)');
    // A token that was sent is checked even here: "any token passes" would hide a broken widget until production.
    if (token !== DEV_CHALLENGE_TOKEN)
      throw new SvcError(
        'challenge_failed',
        `Without SVC_CHALLENGE_SECRET, development accepts no token or the test token ${DEV_CHALLENGE_TOKEN}`,
      );
    return;
  }
  const form = new URLSearchParams({ secret: config.challenge.secret, response: token });
  if (remoteIp) form.set('remoteip', remoteIp);
  let ok = false;
  try {
    const res = await fetch(config.challenge.verifyUrl, {
      method: 'POST',
      body: form,
      signal: AbortSignal.timeout(5000),
    });
    const body = (await res.json()) as { success?: unknown };
    ok = res.ok && body.success === true;
  } catch (e) {
    throw new SvcError('unavailable', 'Bot-challenge verifier unreachable; try again', { retryAfter: 5, cause: e });
  }
  if (!ok) throw new SvcError('challenge_failed', 'The bot-challenge token was rejected');
}
