import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { loginCodeOf, startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.js';
import { csrfOf, WebClient } from '../../helpers/web-client.js';
import { openTestDb } from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';
import { sha256Hex } from '../../../core/crypto.js';

let h: ControlHarness;
let smtp: SmtpSink;
let db: DbHandles;

beforeAll(async () => {
  smtp = await startSmtpSink();
  h = await startControl({ SVC_SMTP_URL: smtp.url });
  db = openTestDb(h.dataDir);
});
afterAll(async () => {
  await db?.close();
  await h?.stop();
  await smtp?.close();
});

/** Signs `email` in through the pages and returns the client holding the session cookie. */
async function signIn(email: string, next = '/dashboard'): Promise<{ web: WebClient; location: string | null }> {
  const web = new WebClient(h.control.url);
  const sent = await web.submit(`/login?next=${encodeURIComponent(next)}`, '/login', { email, next });
  expect(sent.status).toBe(200);
  const code = loginCodeOf(await smtp.waitFor(email));
  const done = await web.post('/login/verify', { email, code, next, csrf_token: csrfOf(sent.html) });
  expect(done.status).toBe(303);
  return { web, location: done.location };
}

describe('web sign-in by email code', () => {
  it('signs in with the mailed code, sets an HttpOnly SameSite=Lax cookie whose token is stored hashed, and signs out', async () => {
    const web = new WebClient(h.control.url);
    const login = await web.get('/login?next=%2Fdashboard');
    expect(login.status).toBe(200);
    const sent = await web.post('/login', {
      email: 'Newcomer@Example.com',
      next: '/dashboard',
      csrf_token: csrfOf(login.html),
    });
    expect(sent.status).toBe(200);
    expect(sent.html).toContain('a 6-digit code');
    const code = loginCodeOf(await smtp.waitFor('newcomer@example.com'));

    const wrong = await web.post('/login/verify', {
      email: 'newcomer@example.com',
      code: code === '000000' ? '111111' : '000000',
      next: '/dashboard',
      csrf_token: csrfOf(sent.html),
    });
    expect(wrong.status).toBe(400);
    expect(web.cookies.has('svc_session')).toBe(false);

    const res = await fetch(`${h.control.url}/login/verify`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      body: new URLSearchParams({
        email: 'newcomer@example.com',
        code,
        next: '/dashboard',
        csrf_token: csrfOf(sent.html),
      }).toString(),
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/dashboard');
    const setCookie = res.headers.getSetCookie().find((s) => s.startsWith('svc_session='))!;
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/i); // development over http; production adds Secure and __Host-
    const token = /^svc_session=([^;]+)/.exec(setCookie)![1]!;
    expect(token.startsWith('sess_')).toBe(true);
    const row = await db.db
      .selectFrom('sessions')
      .select(['token_hash', 'ended_at'])
      .where('token_hash', '=', sha256Hex(token))
      .executeTakeFirst();
    expect(row?.ended_at).toBeNull();
    const raw = await db.db.selectFrom('sessions').select('token_hash').execute();
    expect(raw.some((r) => r.token_hash === token)).toBe(false);
    web.cookies.set('svc_session', token);

    const dash = await web.get('/dashboard');
    expect(dash.status).toBe(200);
    expect(dash.html).toContain('newcomer@example.com');

    const out = await web.post('/logout', { csrf_token: csrfOf(dash.html) });
    expect(out.status).toBe(303);
    expect(web.cookies.has('svc_session')).toBe(false);
    const ended = await db.db
      .selectFrom('sessions')
      .select('ended_at')
      .where('token_hash', '=', sha256Hex(token))
      .executeTakeFirst();
    expect(ended?.ended_at).not.toBeNull();
    // The old cookie no longer opens the dashboard even if a browser kept it.
    web.cookies.set('svc_session', token);
    const after = await web.get('/dashboard');
    expect(after.status).toBe(303);
    expect(after.location).toBe('/login?next=%2Fdashboard');
  });

  it('sends a signed-out visitor of a private page to /login?next=… and back there after sign-in', async () => {
    const anon = await new WebClient(h.control.url).get('/dashboard?tab=keys');
    expect(anon.status).toBe(303);
    expect(anon.location).toBe('/login?next=%2Fdashboard%3Ftab%3Dkeys');
    const { location } = await signIn('back@example.com', '/dashboard?tab=keys');
    expect(location).toBe('/dashboard?tab=keys');
  });

  it.each([
    '//evil.example/x',
    'https://evil.example/',
    '/\\evil.example',
    'javascript:alert(1)',
    '/%0d%0aX: y',
    '/..//evil.example',
    '/./..//x',
    '/%2e%2e//x',
  ])('never redirects off-site after sign-in (next=%s)', async (next) => {
    const { location } = await signIn(`next-${sha256Hex(next).slice(0, 8)}@example.com`, next);
    expect(location?.startsWith('/')).toBe(true);
    expect(location?.startsWith('//')).toBe(false);
    expect(location).not.toContain('\\');
    expect(location).not.toMatch(/[\r\n]/);
  });
});

describe('a signed-in visitor of /login?next=…', () => {
  it.each(['/..//evil.example', '/./..//x', '/%2e%2e//x'])('is not sent off-site (next=%s)', async (next) => {
    const { web } = await signIn(`signed-${sha256Hex(next).slice(0, 8)}@example.com`);
    const res = await web.get(`/login?next=${encodeURIComponent(next)}`);
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard');
  });
});

describe('sign out everywhere', () => {
  it('ends every session of the person, in other browsers too, and only theirs', async () => {
    const { web: a } = await signIn('everywhere@example.com');
    const { web: b } = await signIn('everywhere@example.com');
    const { web: other } = await signIn('someone-else@example.com');
    const dash = await a.get('/dashboard');
    const out = await a.post('/logout/all', { csrf_token: csrfOf(dash.html) });
    expect(out.status).toBe(303);
    expect((await a.get('/dashboard')).status).toBe(303);
    expect((await b.get('/dashboard')).status).toBe(303);
    expect((await other.get('/dashboard')).status).toBe(200);
  });
});

describe('web forms are protected against cross-site posting', () => {
  it('refuses a form posted without the CSRF token (403 csrf_failed) and sends no code', async () => {
    const web = new WebClient(h.control.url);
    await web.get('/login');
    const res = await web.post('/login', { email: 'csrf@example.com' });
    expect(res.status).toBe(403);
    expect(res.html).toContain('csrf_failed');
    await expect(smtp.waitFor('csrf@example.com', undefined, 500)).rejects.toThrow();
  });

  it('refuses a token from another browser (a different CSRF cookie) and a post from another origin', async () => {
    const a = new WebClient(h.control.url);
    const b = new WebClient(h.control.url);
    const tokenA = csrfOf((await a.get('/login')).html);
    await b.get('/login');
    expect((await b.post('/login', { email: 'x@example.com', csrf_token: tokenA })).status).toBe(403);
    const tokenB = csrfOf((await b.get('/login')).html);
    const foreign = await b.post(
      '/login',
      { email: 'x@example.com', csrf_token: tokenB },
      { origin: 'https://evil.example' },
    );
    expect(foreign.status).toBe(403);
    expect((await b.post('/login', { email: 'x@example.com', csrf_token: tokenB })).status).toBe(200);
  });

  it('a signed-in sign-out form without the token leaves the session alive', async () => {
    const { web } = await signIn('keep@example.com');
    expect((await web.post('/logout', {})).status).toBe(403);
    expect((await web.get('/dashboard')).status).toBe(200);
  });
});

describe('security headers and limits', () => {
  it('sends CSP without inline script, frame-ancestors none, nosniff and a referrer policy on pages only', async () => {
    const page = await new WebClient(h.control.url).get('/login');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('same-origin');
    expect(page.html).not.toMatch(/<script(?![^>]*\ssrc=)/);
    const api = await fetch(`${h.control.url}/v1/catalog/categories`);
    expect(api.headers.get('content-security-policy')).toBeNull();
  });

  it('caps codes mailed per email like the REST route (shared budget), without locking the person out', async () => {
    const web = new WebClient(h.control.url);
    const email = 'limited@example.com';
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await web.submit('/login', '/login', { email })).status);
    // Past the cap the page still says "check your email" (docs/identity.md): the last mailed code keeps working.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    for (let i = 0; i < 5; i++) await smtp.waitFor(email);
    const rest = await fetch(`${h.control.url}/v1/auth/login/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(rest.status).toBe(202);
    await expect(smtp.waitFor(email, undefined, 500)).rejects.toThrow();
  });
});
