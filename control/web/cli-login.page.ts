/**
 * The browser pages of `svc login`: /cli/login (loopback flow: "Sign in the svc CLI on this computer?") and
 * /cli/device (device flow: enter the code the terminal shows). Minimal on purpose: the person signs in with the
 * mailed 6-digit code, held in an HttpOnly SameSite=Lax cookie session, and every confirm form carries a CSRF token
 * bound to that session. The web issue's layout and `requireWebSession` replace the local helpers at merge.
 */
import { createHmac } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { AppEnv } from '../lib/http.js';
import { sha256Hex, safeEqualHex } from '../lib/crypto.js';
import { SvcError } from '../lib/errors.js';
import { WindowLimiter } from '../lib/rate-limit.js';
import { clientIp } from '../lib/client-ip.js';
import { requestLoginCode, verifyLoginCode } from '../sessions/sessions.service.js';
import { assertLoginRequest, confirmDevice, issueCliCode, type Who } from '../sessions/cli-login.service.js';

export const cliLoginPages = new Hono<AppEnv>();
const COOKIE = 'svc_web_session';

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

function page(c: Context<AppEnv>, title: string, body: string, status: 200 | 400 | 429 = 200) {
  c.header('cache-control', 'no-store');
  c.header('x-frame-options', 'DENY');
  c.header(
    'content-security-policy',
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http://127.0.0.1:* http://localhost:*",
  );
  c.header('referrer-policy', 'no-referrer');
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${esc(title)} · svc</title><style>body{font:16px system-ui;max-width:32rem;margin:3rem auto;padding:0 1rem}input,button{font:inherit;padding:.4rem;margin:.3rem 0}</style></head><body><h1>${esc(title)}</h1>${body}</body></html>`,
    status,
  );
}

const hidden = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('');

async function webSession(c: Context<AppEnv>): Promise<(Who & { email: string; tokenHash: string }) | null> {
  const token = getCookie(c, COOKIE);
  if (!token) return null;
  const { db, clock } = c.get('ctx');
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select([
      'sessions.org_id',
      'sessions.user_id',
      'sessions.token_hash',
      'sessions.expires_at',
      'sessions.ended_at',
      'users.email',
    ])
    .where('sessions.token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (!row || row.ended_at !== null || row.expires_at <= clock.now()) return null;
  return { orgId: row.org_id, userId: row.user_id, email: row.email, tokenHash: row.token_hash };
}

const csrfFor = (c: Context<AppEnv>, tokenHash: string) =>
  createHmac('sha256', c.get('ctx').secretKey).update(`csrf:${tokenHash}`).digest('hex');

function checkCsrf(c: Context<AppEnv>, tokenHash: string, sent: unknown): void {
  if (typeof sent !== 'string' || !/^[0-9a-f]{64}$/.test(sent) || !safeEqualHex(sent, csrfFor(c, tokenHash)))
    throw new SvcError('forbidden', 'The form expired; reload the page');
}

/** Sign in by mailed code, then return to `next` (a local path only). */
function signInForm(next: string, email = '', askCode = false, note = '') {
  return `${note ? `<p>${esc(note)}</p>` : ''}<form method="post" action="/cli/signin">${hidden({ next })}<label>Email <input name="email" type="email" required value="${esc(email)}"></label><br>${
    askCode
      ? '<label>6-digit code <input name="code" inputmode="numeric" pattern="[0-9]{6}" required autofocus></label><br>'
      : ''
  }<button type="submit">${askCode ? 'Sign in' : 'Email me a code'}</button></form>`;
}

const limiter = new WindowLimiter(20, 3600_000);

cliLoginPages.post('/cli/signin', async (c) => {
  const ctx = c.get('ctx');
  const form = await c.req.parseBody();
  const next =
    typeof form.next === 'string' && /^\/cli\/(login|device)(\?|$)/.test(form.next) ? form.next : '/cli/device';
  const email = typeof form.email === 'string' ? form.email.trim().toLowerCase() : '';
  const code = typeof form.code === 'string' ? form.code.trim() : '';
  if (!/^[^@\s]+@[^@\s]+$/.test(email))
    return page(c, 'Sign in to svc', signInForm(next, '', false, 'Enter a valid email.'), 400);
  if (limiter.take(`${clientIp(c)}:${email}`, ctx.clock.now()) > 0)
    return page(c, 'Sign in to svc', '<p>Too many attempts; try again later.</p>', 429);
  if (!code) {
    await requestLoginCode(ctx, email);
    return page(
      c,
      'Check your mail',
      signInForm(next, email, true, `If ${email} can receive mail, a code is on its way.`),
    );
  }
  try {
    const r = await verifyLoginCode(ctx, email, code);
    setCookie(c, COOKIE, r.session_token, {
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
      secure: new URL(c.req.url).protocol === 'https:',
      maxAge: 30 * 86_400,
    });
  } catch (e) {
    if (e instanceof SvcError) return page(c, 'Check your mail', signInForm(next, email, true, e.detail), 400);
    throw e;
  }
  return c.redirect(next, 303);
});

cliLoginPages.get('/cli/login', async (c) => {
  const q = c.req.query();
  assertLoginRequest(q);
  const me = await webSession(c);
  const back = `/cli/login?${new URLSearchParams(q).toString()}`;
  if (!me) return page(c, 'Sign in to svc', `<p>Sign in to connect the svc CLI.</p>${signInForm(back)}`);
  const form = `<p>Signed in as <strong>${esc(me.email)}</strong>. The CLI will act with your account's full access, as if you were using the dashboard.</p><form method="post" action="/cli/login/confirm">${hidden(
    { ...q, csrf: csrfFor(c, me.tokenHash) },
  )}<button type="submit">Confirm</button></form><p>Not you, or you did not just run <code>svc login</code>? Close this page.</p>`;
  return page(c, 'Sign in the svc CLI on this computer?', form);
});

cliLoginPages.post('/cli/login/confirm', async (c) => {
  const me = await webSession(c);
  if (!me) throw new SvcError('unauthorized', 'Sign in first');
  const form = await c.req.parseBody();
  checkCsrf(c, me.tokenHash, form.csrf);
  const str = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : undefined);
  const req = assertLoginRequest({
    redirect_uri: str('redirect_uri'),
    state: str('state'),
    code_challenge: str('code_challenge'),
    code_challenge_method: str('code_challenge_method'),
  });
  const code = await issueCliCode(c.get('ctx'), me, req);
  const to = new URL(req.redirectUri);
  to.searchParams.set('code', code);
  to.searchParams.set('state', req.state);
  return c.redirect(to.toString(), 303);
});

cliLoginPages.get('/cli/device', async (c) => {
  const me = await webSession(c);
  if (!me)
    return page(
      c,
      'Sign in to svc',
      `<p>Sign in, then enter the code your terminal shows.</p>${signInForm('/cli/device')}`,
    );
  return page(
    c,
    'Connect the svc CLI',
    `<p>Signed in as <strong>${esc(me.email)}</strong>. Enter the code shown by <code>svc login</code>:</p><form method="post" action="/cli/device">${hidden({ csrf: csrfFor(c, me.tokenHash) })}<input name="user_code" placeholder="ABCD-EFGH" required autofocus><br><button type="submit">Confirm</button></form>`,
  );
});

cliLoginPages.post('/cli/device', async (c) => {
  const me = await webSession(c);
  if (!me) throw new SvcError('unauthorized', 'Sign in first');
  const form = await c.req.parseBody();
  checkCsrf(c, me.tokenHash, form.csrf);
  const ok = typeof form.user_code === 'string' && (await confirmDevice(c.get('ctx'), me, form.user_code));
  if (!ok)
    return page(
      c,
      'Connect the svc CLI',
      '<p>That code is wrong or expired. Check the terminal and try again.</p>',
      400,
    );
  return page(c, 'The svc CLI is signed in', '<p>You can close this window and return to the terminal.</p>');
});

cliLoginPages.post('/cli/signout', async (c) => {
  deleteCookie(c, COOKIE, { path: '/' });
  return c.redirect('/cli/device', 303);
});
