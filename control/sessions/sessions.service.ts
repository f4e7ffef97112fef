/**
 * Passwordless login: a 6-digit code by mail (10-minute TTL, stored as an HMAC, 5 attempts), exchanged for a
 * `sess_…` token (stored hashed, 30-day expiry). The first successful verify of an email creates its account if
 * needed and grants starter credits once (idempotency key `starter:{org_id}`).
 *
 * The one sign-in flow: every surface that mails or checks a login code (POST /v1/auth/login/*, the /login page,
 * the OAuth step-up form, and `svc login --email` through REST) calls `requestLoginCode` and `verifyLoginCode` /
 * `consumeLoginCode` here, which apply every login limit themselves (docs/identity.md, "Login limits"): per
 * address a 429, per email never (a quiet no-op past the hourly mail cap), per code 5 guesses.
 */
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import type { Database } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';
import { newId, sixDigitCode } from '../../core/ids.js';
import { safeEqualHex } from '../../core/crypto.js';
import { postEntry } from '../ledger/ledger.service.js';
import { mintSessionToken } from '../../core/key-format.js';
import { insertOrg, markOrgEmailVerified } from '../orgs/orgs.service.js';
import type { LoginResult } from '../../core/schemas/identity.schemas.js';
import { assertSession, type Principal } from '../auth/principal.js';
import { takeAbuseLimit, withLoginVerifyLimit } from '../auth/abuse-limits.js';
import type { EmailInput, LoginVerifyInput } from '../../core/schemas/identity.schemas.js';

export const LOGIN_CODE_TTL_MS = 10 * 60_000;
export const LOGIN_CODE_MAX_ATTEMPTS = 5;
export const SESSION_TTL_MS = 30 * 86_400_000;
export const LOGIN_SEND_WINDOW_MS = 3600_000;

function codeHash(ctx: AppContext, codeId: string, code: string): string {
  // Keyed: a 6-digit code space is too small for a plain hash to protect a leaked database.
  return createHmac('sha256', ctx.secretKey).update(`${codeId}:${code}`).digest('hex');
}

/** Where a sign-in step comes from: the per-address limits count on it (the socket peer, control/lib/client-ip.ts). */
export interface SignInOrigin {
  readonly ip: string;
}

/**
 * Same work, same response and no mail-delivery wait on either branch: existence of the account is not revealed.
 * Past `SVC_LOGIN_RATE_PER_HOUR` codes per email per hour the request is a quiet no-op while the latest code is still
 * usable: a stranger can neither flood the mailbox nor lock its owner out (the last mailed code keeps working).
 * Per address (`from.ip`), past 10 × that many requests an hour, it throws `rate_limited` (429, Retry-After).
 * @public Anyone may ask for a code for an email (docs/identity.md: per-email limit, never a 429).
 */
export async function requestLoginCode(ctx: AppContext, input: EmailInput, from: SignInOrigin): Promise<void> {
  takeAbuseLimit(ctx, 'loginIp', from.ip);
  const now = ctx.clock.now();
  const email = input.email.toLowerCase();
  const code = sixDigitCode();
  const id = newId('lgc', now);
  const issued = await ctx.db.transaction().execute(async (trx) => {
    const recent = await trx
      .selectFrom('login_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('email', '=', email)
      .where('created_at', '>', now - LOGIN_SEND_WINDOW_MS)
      .executeTakeFirstOrThrow();
    if (Number(recent.n) >= ctx.config.rateLimits.loginPerHour) {
      const latest = await trx
        .selectFrom('login_codes')
        .select(['expires_at', 'attempts'])
        .where('email', '=', email)
        .where('consumed_at', 'is', null)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (latest && latest.expires_at > now && latest.attempts < LOGIN_CODE_MAX_ATTEMPTS) return false;
    }
    // A new code replaces any earlier one.
    await trx
      .updateTable('login_codes')
      .set({ consumed_at: now })
      .where('email', '=', email)
      .where('consumed_at', 'is', null)
      .execute();
    await trx
      .insertInto('login_codes')
      .values({
        id,
        email,
        code_hash: codeHash(ctx, id, code),
        created_at: now,
        expires_at: now + LOGIN_CODE_TTL_MS,
        consumed_at: null,
      })
      .execute();
    return true;
  });
  if (!issued) return;
  const mail = {
    to: email,
    subject: `Your svc login code: ${code}`,
    text: `Your svc login code is ${code}\n\nIt is valid for 10 minutes. Log in with:\n  svc login --email ${email} --code ${code}\n\nIf you did not ask for this, ignore this mail.\n`,
  };
  setImmediate(() => {
    ctx.mailer
      .send(mail)
      .catch((e: unknown) => ctx.log.error('login mail failed', { err: e instanceof Error ? e : String(e) }));
  });
}

/**
 * Spends the newest unexpired login code of `email` if `code` matches; throws `invalid_code` or `too_many_attempts`,
 * or `rate_limited` once `from.ip` failed too often (control/auth/abuse-limits.ts `withLoginVerifyLimit`).
 * Used by the login below and by the OAuth step-up, which proves an email without signing in.
 * @public Its credential is the code mailed to the email.
 */
export function consumeLoginCode(ctx: AppContext, input: LoginVerifyInput, from: SignInOrigin): Promise<void> {
  return withLoginVerifyLimit(ctx, from.ip, () => _spendCode(ctx, input.email, input.code));
}

async function _spendCode(ctx: AppContext, rawEmail: string, code: string): Promise<void> {
  const now = ctx.clock.now();
  const email = rawEmail.toLowerCase();
  // Wrong-code bookkeeping must commit even though the request fails, so it is its own transaction.
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('login_codes')
      .selectAll()
      .where('email', '=', email)
      .where('consumed_at', 'is', null)
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row || row.expires_at <= now) return 'invalid' as const;
    if (row.attempts >= LOGIN_CODE_MAX_ATTEMPTS) return 'exhausted' as const;
    if (!safeEqualHex(codeHash(ctx, row.id, code), row.code_hash)) {
      await trx
        .updateTable('login_codes')
        .set({ attempts: row.attempts + 1 })
        .where('id', '=', row.id)
        .execute();
      return row.attempts + 1 >= LOGIN_CODE_MAX_ATTEMPTS ? ('exhausted' as const) : ('invalid' as const);
    }
    await trx.updateTable('login_codes').set({ consumed_at: now }).where('id', '=', row.id).execute();
    return 'ok' as const;
  });
  if (outcome === 'invalid')
    throw new SvcError(
      'invalid_code',
      'The code is wrong or expired: request a new one with POST /v1/auth/login/request',
    );
  if (outcome === 'exhausted')
    throw new SvcError(
      'too_many_attempts',
      'Too many wrong codes: request a new one with POST /v1/auth/login/request',
      { retryAfter: 1 },
    );
}

/**
 * Signs in with a mailed code: spends it (`consumeLoginCode`, with its limits), then creates the account on first
 * use and starts a session.
 * @public Its credential is the code mailed to the email.
 */
export async function verifyLoginCode(
  ctx: AppContext,
  input: LoginVerifyInput,
  from: SignInOrigin,
): Promise<LoginResult> {
  await consumeLoginCode(ctx, input, from);
  const now = ctx.clock.now();
  const email = input.email.toLowerCase();

  return ctx.db.transaction().execute(async (trx) => {
    let user = await trx.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    let newAccount = false;
    if (!user) {
      newAccount = true;
      const orgId = await insertOrg(trx, { name: email, origin: 'login', email, verifiedAt: now }, now);
      user = {
        id: newId('usr', now),
        org_id: orgId,
        email,
        name: null,
        role: 'owner',
        email_verified_at: now,
        created_at: now,
        last_login_at: null,
      };
      await trx.insertInto('users').values(user).execute();
    }
    // Receiving the code proves the mailbox: the email counts as verified from now on, for the user and its org
    // (which releases a web signup's withheld credit, as the verification token would have).
    await trx
      .updateTable('users')
      .set({ last_login_at: now, email_verified_at: user.email_verified_at ?? now })
      .where('id', '=', user.id)
      .execute();
    const org = await trx
      .selectFrom('orgs')
      .select('email_verified_at')
      .where('id', '=', user.org_id)
      .executeTakeFirst();
    if (org && org.email_verified_at === null) await markOrgEmailVerified(trx, user.org_id, email, now);
    let starter = 0;
    if (ctx.config.credits.starterCents > 0) {
      const r = await postEntry(
        trx,
        {
          orgId: user.org_id,
          kind: 'starter_credit',
          amountCents: ctx.config.credits.starterCents,
          reason: 'starter credit on first login',
          idempotencyKey: `starter:${user.org_id}`,
        },
        now,
      );
      if (r.applied) starter = ctx.config.credits.starterCents;
    }
    const session = await insertSession(trx, { orgId: user.org_id, userId: user.id }, now);
    return {
      session_token: session.token,
      expires_at: session.expires_at,
      org_id: user.org_id,
      user_id: user.id,
      new_account: newAccount,
      starter_credit_cents: starter,
    };
  });
}

/**
 * A new `sess_…` token for a user (stored hashed; 30-day expiry). Shared by email-code and CLI sign-in.
 * @internal Inside sign-in (code, CLI, device) once the person proved who they are.
 */
export async function insertSession(
  trx: Kysely<Database>,
  who: { orgId: string; userId: string },
  now: number,
): Promise<{ token: string; expires_at: string }> {
  const token = mintSessionToken();
  await trx
    .insertInto('sessions')
    .values({
      id: newId('ses', now),
      org_id: who.orgId,
      user_id: who.userId,
      token_hash: token.hash,
      created_at: now,
      expires_at: now + SESSION_TTL_MS,
      ended_at: null,
    })
    .execute();
  return { token: token.plaintext, expires_at: new Date(now + SESSION_TTL_MS).toISOString() };
}

/** Signs out the session the caller holds (an API key has none to end: `session_required`). */
export async function endSession(ctx: AppContext, caller: Principal | undefined): Promise<void> {
  const { sessionId } = assertSession(caller);
  await ctx.db
    .updateTable('sessions')
    .set({ ended_at: ctx.clock.now() })
    .where('id', '=', sessionId)
    .where('ended_at', 'is', null)
    .execute();
}

/** Ends every live session of a user (the dashboard's "sign out everywhere"): browsers, CLI logins, all of them. */
export async function endAllSessions(ctx: AppContext, caller: Principal | undefined): Promise<number> {
  const { userId } = assertSession(caller);
  const r = await ctx.db
    .updateTable('sessions')
    .set({ ended_at: ctx.clock.now() })
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
