/**
 * Orgs and how they come to be: anonymous agent registration (0 credits, consumer scopes), web signup
 * (100 cents withheld until the email is verified), and email verification (releases the withheld credit and
 * elevates the org's registered keys with billing:write and provider:write: the same key, no second one).
 */
import type { Db, Row } from '../../core/db/database.js';
import type { AppContext } from '../context.js';
import { recordChange } from '../../core/db/changes.js';
import { SvcError } from '../../core/errors.js';
import { newId, randomString } from '../../core/ids.js';
import { sha256Hex } from '../../core/crypto.js';
import { ensureBalanceRow, postEntry, releasePending } from '../ledger/ledger.service.js';
import { REGISTER_SCOPES, VERIFIED_EXTRA_SCOPES, formatScopes, parseScopes } from '../../core/scopes.js';
import { insertKey } from '../keys/keys.service.js';
import type { EmailVerified, Registration } from '../../core/schemas/identity.schemas.js';
import { assertScope, type Principal } from '../auth/principal.js';
import { takeAbuseLimit } from '../auth/abuse-limits.js';

export const VERIFY_TOKEN_TTL_MS = 24 * 3600_000;

/** @internal Inside registration and sign-up transactions. */
export async function insertOrg(
  db: Db,
  input: { name: string; origin: Row<'orgs'>['origin']; email?: string | null; verifiedAt?: number | null },
  now: number,
): Promise<string> {
  const id = newId('org', now);
  await db
    .insertInto('orgs')
    .values({
      id,
      name: input.name,
      origin: input.origin,
      status_reason: null,
      email: input.email ?? null,
      email_verified_at: input.verifiedAt ?? null,
      created_at: now,
    })
    .execute();
  await ensureBalanceRow(db, id, now);
  return id;
}

/** @public Anyone may register an agent org (rate-limited per address at the edge). */
export async function registerAnonymous(ctx: AppContext): Promise<Registration> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const orgId = await insertOrg(trx, { name: `agent-${randomString(6).toLowerCase()}`, origin: 'register' }, now);
    const { row, plaintext } = await insertKey(
      trx,
      { orgId, name: 'default', scopes: REGISTER_SCOPES, origin: 'register' },
      now,
    );
    return {
      org_id: orgId,
      key_id: row.id,
      api_key: plaintext,
      scopes: parseScopes(row.scopes),
      credit_cents: 0 as const,
    };
  });
}

/** Issues a verification token (plaintext only in the mail) for an org's email. */
async function issueVerification(
  ctx: AppContext,
  db: Db,
  input: { orgId: string; userId: string | null; email: string },
  now: number,
): Promise<string> {
  const token = 'vt_' + randomString(40);
  await db
    .insertInto('email_verifications')
    .values({
      id: newId('emv', now),
      org_id: input.orgId,
      user_id: input.userId,
      email: input.email,
      token_hash: sha256Hex(token),
      created_at: now,
      expires_at: now + VERIFY_TOKEN_TTL_MS,
      consumed_at: null,
    })
    .execute();
  return token;
}

function verificationMail(ctx: AppContext, email: string, token: string) {
  return {
    to: email,
    subject: 'Verify your email for svc',
    text:
      `Your svc email verification token:\n\n  ${token}\n\n` +
      `Verify with:\n  svc verify --token ${token}\nor\n  curl -X POST ${ctx.config.urls.control}/v1/auth/verify-email -H 'content-type: application/json' -d '{"token":"${token}"}'\n\n` +
      `The token is valid for 24 hours. If you did not ask for this, ignore this mail.\n`,
  };
}

/** Mail is sent after the response is decided, so timing does not reveal which branch ran. */
function sendLater(ctx: AppContext, mail: { to: string; subject: string; text: string }): void {
  setImmediate(() => {
    ctx.mailer
      .send(mail)
      .catch((e: unknown) =>
        ctx.log.error('mail send failed', { subject: mail.subject, err: e instanceof Error ? e : String(e) }),
      );
  });
}

/**
 * Web signup. The response is the same whether or not the email already has an account (no enumeration).
 * @public Anyone may sign up (bot challenge and per-address limit at the edge).
 */
export async function signup(ctx: AppContext, input: { email: string; name?: string | undefined }): Promise<void> {
  const now = ctx.clock.now();
  const email = input.email.toLowerCase();
  const existing = await ctx.db
    .selectFrom('users')
    .select(['id', 'org_id', 'email_verified_at'])
    .where('email', '=', email)
    .executeTakeFirst();
  if (existing && existing.email_verified_at === null) {
    // Signing up again before verifying resends the verification (same 202): the withheld credit is not stranded.
    await resendVerification(ctx, { orgId: existing.org_id, userId: existing.id, email }, now);
    return;
  }
  if (existing) {
    sendLater(ctx, {
      to: email,
      subject: 'You already have an svc account',
      text: `Someone (hopefully you) tried to sign up with this email, which already has an account.\nLog in with:\n  svc login --email ${email}\n`,
    });
    return;
  }
  const token = await ctx.db.transaction().execute(async (trx) => {
    const orgId = await insertOrg(trx, { name: input.name ?? email, origin: 'signup' }, now);
    const userId = newId('usr', now);
    await trx
      .insertInto('users')
      .values({
        id: userId,
        org_id: orgId,
        email,
        name: input.name ?? null,
        role: 'owner',
        email_verified_at: null,
        created_at: now,
        last_login_at: null,
      })
      .execute();
    if (ctx.config.credits.signupCents > 0) {
      await postEntry(
        trx,
        {
          orgId,
          kind: 'signup_credit',
          status: 'pending',
          amountCents: ctx.config.credits.signupCents,
          reason: 'web signup credit, withheld until email verification',
          idempotencyKey: `signup:${orgId}`,
        },
        now,
      );
    }
    return issueVerification(ctx, trx, { orgId, userId, email }, now);
  });
  sendLater(ctx, verificationMail(ctx, email, token));
}

async function resendVerification(
  ctx: AppContext,
  input: { orgId: string; userId: string; email: string },
  now: number,
): Promise<void> {
  const token = await ctx.db.transaction().execute((trx) => issueVerification(ctx, trx, input, now));
  sendLater(ctx, verificationMail(ctx, input.email, token));
}

/**
 * An org attaches an email to get a verification token: an anonymous (registered) org a new one, or an org whose
 * own unverified user has this email (web signup) a fresh token for it, which is how verification is resent.
 */
export async function requestOrgEmail(ctx: AppContext, caller: Principal | undefined, rawEmail: string): Promise<void> {
  const { orgId } = assertScope(caller, 'keys:write');
  takeAbuseLimit(ctx, 'attachEmail', rawEmail.toLowerCase());
  const now = ctx.clock.now();
  const email = rawEmail.toLowerCase();
  const org = await ctx.db
    .selectFrom('orgs')
    .select(['email_verified_at'])
    .where('id', '=', orgId)
    .executeTakeFirstOrThrow();
  if (org.email_verified_at !== null) throw new SvcError('invalid_state', 'This org already has a verified email');
  const taken = await ctx.db.selectFrom('users').select(['id', 'org_id']).where('email', '=', email).executeTakeFirst();
  if (taken?.org_id === orgId) return resendVerification(ctx, { orgId, userId: taken.id, email }, now);
  if (taken) {
    sendLater(ctx, {
      to: email,
      subject: 'Email already in use on svc',
      text: 'An svc org tried to attach this email, which already belongs to an account. Nothing was changed.\n',
    });
    return;
  }
  const token = await ctx.db
    .transaction()
    .execute((trx) => issueVerification(ctx, trx, { orgId, userId: null, email }, now));
  sendLater(ctx, verificationMail(ctx, email, token));
}

/** @public Its credential is the verification token it consumes. */
export async function verifyEmail(ctx: AppContext, token: string): Promise<EmailVerified> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const v = await trx
      .selectFrom('email_verifications')
      .selectAll()
      .where('token_hash', '=', sha256Hex(token))
      .executeTakeFirst();
    if (!v || v.consumed_at !== null || v.expires_at <= now)
      throw new SvcError('invalid_token', 'Verification token is wrong, used or expired');
    await trx.updateTable('email_verifications').set({ consumed_at: now }).where('id', '=', v.id).execute();
    const { released, elevated } = await applyEmailVerification(
      trx,
      { orgId: v.org_id, userId: v.user_id, email: v.email },
      now,
    );
    return {
      verified: true as const,
      org_id: v.org_id,
      email: v.email,
      released_credit_cents: released,
      elevated_key_ids: elevated,
    };
  });
}

/**
 * An email proven for an org (the emailed token, or the login code on the OAuth authorization page for a
 * registered key's org): its owner user exists and is verified, then `markOrgEmailVerified`. Runs in the caller's
 * transaction; `conflict` when the email already belongs to another account.
 * @internal Inside verifyEmail and the OAuth step-up, which proved the email.
 */
export async function applyEmailVerification(
  trx: Db,
  input: { orgId: string; userId: string | null; email: string },
  now: number,
): Promise<{ userId: string; released: number; elevated: string[] }> {
  let userId = input.userId;
  if (userId === null) {
    const taken = await trx.selectFrom('users').select('id').where('email', '=', input.email).executeTakeFirst();
    if (taken) throw new SvcError('conflict', 'This email belongs to another account');
    userId = newId('usr', now);
    await trx
      .insertInto('users')
      .values({
        id: userId,
        org_id: input.orgId,
        email: input.email,
        name: null,
        role: 'owner',
        email_verified_at: now,
        created_at: now,
        last_login_at: null,
      })
      .execute();
  } else {
    await trx.updateTable('users').set({ email_verified_at: now }).where('id', '=', userId).execute();
  }
  return { userId, ...(await markOrgEmailVerified(trx, input.orgId, input.email, now)) };
}

/**
 * The org's email is proven (verification token, or a login code received at it): record it, release the withheld
 * signup credit (idempotent) and elevate the org's registered keys. Runs inside the caller's transaction.
 * @internal Inside sign-in and verification transactions.
 */
export async function markOrgEmailVerified(
  trx: Db,
  orgId: string,
  email: string,
  now: number,
): Promise<{ released: number; elevated: string[] }> {
  await trx.updateTable('orgs').set({ email, email_verified_at: now }).where('id', '=', orgId).execute();
  // One org change makes every cache re-read all of the org's keys: gateways cache whether a key's org is verified
  // (it picks the 402's next step), and the elevated keys below have new scopes.
  await recordChange(trx, 'org', orgId, now);
  let released = 0;
  const pending = await trx
    .selectFrom('ledger_entries')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('kind', '=', 'signup_credit')
    .where('status', '=', 'pending')
    .execute();
  for (const p of pending) {
    const r = await releasePending(trx, p, 'email verified', now);
    if (r.applied) released += p.amount_cents;
  }
  const elevated: string[] = [];
  const keys = await trx
    .selectFrom('api_keys')
    .select(['id', 'scopes'])
    .where('org_id', '=', orgId)
    .where('origin', '=', 'register')
    .where('revoked_at', 'is', null)
    .execute();
  for (const k of keys) {
    const scopes = new Set(parseScopes(k.scopes));
    const before = scopes.size;
    for (const s of VERIFIED_EXTRA_SCOPES) scopes.add(s);
    if (scopes.size === before) continue;
    await trx
      .updateTable('api_keys')
      .set({ scopes: formatScopes(scopes), updated_at: now })
      .where('id', '=', k.id)
      .execute();
    elevated.push(k.id);
  }
  return { released, elevated };
}
