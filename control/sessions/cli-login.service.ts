/**
 * `svc login` by browser (spec §4 CLI, docs/cli.md "How svc login works"). Loopback flow: a signed-in person
 * confirms on /cli/login, which issues a one-time code (hashed, 5-minute TTL, bound to the PKCE S256 challenge and
 * the loopback redirect_uri) that the CLI exchanges for a session. Device flow (no browser): the CLI polls with a
 * device code while the person enters a short user code on /cli/device. Every code is single use.
 */
import { createHash } from 'node:crypto';
import type { AppContext } from '../context.js';
import { sha256Hex } from '../../core/crypto.js';
import { SvcError } from '../../core/errors.js';
import { newId, randomString } from '../../core/ids.js';
import { insertSession } from './sessions.service.js';
import { assertPerson, type Principal } from '../auth/principal.js';

export const CLI_CODE_TTL_MS = 5 * 60_000;
export const DEVICE_TTL_MS = 10 * 60_000;
export const DEVICE_POLL_INTERVAL_S = 2;
/** Unambiguous letters for a code a person types (no 0/O, 1/I/L). */
const USER_CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

type Ctx = Pick<AppContext, 'db' | 'clock'>;
export interface CliSession {
  session_token: string;
  expires_at: string;
  org_id: string;
}

/**
 * Only a plain-http loopback URL with a port: the code must never leave the person's machine.
 * @public Pure URL check.
 */
export function isLoopbackRedirect(uri: string): boolean {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  return (
    u.protocol === 'http:' &&
    ['127.0.0.1', '[::1]', 'localhost'].includes(u.hostname) &&
    u.port !== '' &&
    !u.username &&
    !u.password
  );
}

/** @public Validates a CLI sign-in link's parameters; changes nothing. */
export function assertLoginRequest(p: {
  redirect_uri?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}) {
  const errors = [];
  if (!p.redirect_uri || !isLoopbackRedirect(p.redirect_uri))
    errors.push({ path: 'redirect_uri', message: 'must be http://127.0.0.1:<port>/… (loopback)' });
  if (!p.state || p.state.length < 8 || p.state.length > 200)
    errors.push({ path: 'state', message: '8 to 200 characters' });
  if (!p.code_challenge || !/^[A-Za-z0-9_-]{43}$/.test(p.code_challenge))
    errors.push({ path: 'code_challenge', message: 'base64url SHA-256 (43 characters)' });
  if (p.code_challenge_method !== 'S256') errors.push({ path: 'code_challenge_method', message: 'must be S256' });
  if (errors.length)
    throw new SvcError('validation_failed', 'This CLI sign-in link is not valid; run `svc login` again', { errors });
  return { redirectUri: p.redirect_uri!, state: p.state!, codeChallenge: p.code_challenge! };
}

export async function issueCliCode(
  ctx: Ctx,
  caller: Principal | undefined,
  p: { codeChallenge: string; redirectUri: string },
): Promise<string> {
  const who = assertPerson(caller);
  const now = ctx.clock.now();
  const code = `clc_${randomString(40)}`;
  await ctx.db
    .insertInto('cli_logins')
    .values({
      id: newId('clc', now),
      kind: 'code',
      secret_hash: sha256Hex(code),
      user_code_hash: null,
      code_challenge: p.codeChallenge,
      redirect_uri: p.redirectUri,
      org_id: who.orgId,
      user_id: who.userId,
      created_at: now,
      expires_at: now + CLI_CODE_TTL_MS,
      confirmed_at: now,
      consumed_at: null,
    })
    .execute();
  return code;
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** @public Its credential is the one-time code and PKCE verifier it is given. */
export async function exchangeCliCode(
  ctx: Ctx,
  p: { code: string; code_verifier: string; redirect_uri: string },
): Promise<CliSession> {
  return _consume(
    ctx,
    'code',
    p.code,
    (row) => row.code_challenge === s256(p.code_verifier) && row.redirect_uri === p.redirect_uri,
  );
}

/** @public Anyone may start a device sign-in; a signed-in person confirms it. */
export async function startDeviceLogin(ctx: Ctx, baseUrl: string) {
  const now = ctx.clock.now();
  const deviceCode = `cld_${randomString(40)}`;
  const raw = randomString(8, USER_CODE_ALPHABET);
  await ctx.db
    .insertInto('cli_logins')
    .values({
      id: newId('clc', now),
      kind: 'device',
      secret_hash: sha256Hex(deviceCode),
      user_code_hash: sha256Hex(raw),
      code_challenge: null,
      redirect_uri: null,
      org_id: null,
      user_id: null,
      created_at: now,
      expires_at: now + DEVICE_TTL_MS,
      confirmed_at: null,
      consumed_at: null,
    })
    .execute();
  return {
    device_code: deviceCode,
    user_code: `${raw.slice(0, 4)}-${raw.slice(4)}`,
    verification_uri: `${baseUrl}/cli/device`,
    interval: DEVICE_POLL_INTERVAL_S,
    expires_in: DEVICE_TTL_MS / 1000,
  };
}

/** The person typed the user code on /cli/device while signed in: the polling CLI may now get a session. */
export async function confirmDevice(ctx: Ctx, caller: Principal | undefined, userCode: string): Promise<boolean> {
  const who = assertPerson(caller);
  const now = ctx.clock.now();
  const normalized = userCode.toUpperCase().replace(/[^A-Z0-9]/g, '');
  const r = await ctx.db
    .updateTable('cli_logins')
    .set({ org_id: who.orgId, user_id: who.userId, confirmed_at: now })
    .where('kind', '=', 'device')
    .where('user_code_hash', '=', sha256Hex(normalized))
    .where('confirmed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** @public Its credential is the device code it is given. */
export async function pollDevice(ctx: Ctx, deviceCode: string): Promise<CliSession> {
  return _consume(ctx, 'device', deviceCode, () => true);
}

/** Marks the row used and mints the session in one transaction, so a code can never yield two sessions. */
async function _consume(
  ctx: Ctx,
  kind: 'code' | 'device',
  secret: string,
  matches: (row: { code_challenge: string | null; redirect_uri: string | null }) => boolean,
): Promise<CliSession> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('cli_logins')
      .selectAll()
      .where('secret_hash', '=', sha256Hex(secret))
      .where('kind', '=', kind)
      .executeTakeFirst();
    if (!row || row.consumed_at !== null)
      throw new SvcError('invalid_grant', 'Unknown or already used code; run `svc login` again');
    if (row.expires_at <= now)
      throw new SvcError(
        kind === 'device' ? 'expired_token' : 'invalid_grant',
        'The sign-in expired; run `svc login` again',
      );
    if (row.confirmed_at === null || !row.user_id || !row.org_id)
      throw new SvcError('authorization_pending', 'Waiting for the person to confirm in the browser');
    if (!matches(row))
      throw new SvcError('invalid_grant', 'The code does not match this CLI (PKCE verifier or redirect_uri)');
    await trx
      .updateTable('cli_logins')
      .set({ consumed_at: now })
      .where('id', '=', row.id)
      .where('consumed_at', 'is', null)
      .execute();
    const s = await insertSession(trx, { orgId: row.org_id, userId: row.user_id }, now);
    return { session_token: s.token, expires_at: s.expires_at, org_id: row.org_id };
  });
}
