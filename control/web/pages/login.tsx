/**
 * Sign-in by email code (the same OTP flow and limits as POST /v1/auth/login/*) and sign-out.
 * The code never appears in a URL: every step is a POST with the CSRF token.
 */
import type { Context } from 'hono';
import { clientIp } from '../../lib/client-ip.js';
import { SvcError } from '../../../core/errors.js';
import { EmailInputSchema, LoginVerifyInputSchema } from '../../../core/schemas/identity.schemas.js';
import { endAllSessions, endSession, requestLoginCode, verifyLoginCode } from '../../sessions/sessions.service.js';
import { csrfField } from '../csrf.js';
import { renderPage, type PageOptions } from '../layout.js';
import { formString } from '../form.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { clearSessionCookie, safeNext, setSessionCookie } from '../web-session.js';
import { CodeInput, CodeSentNotice } from '../login-code.js';

export const loginRoutes = newWebRouter();

function EmailForm(props: { c: Context<WebEnv>; next: string; email?: string; error?: string }) {
  return (
    <>
      {props.error ? (
        <p class="notice error" role="alert">
          {props.error}
        </p>
      ) : null}
      <p>Enter your email. We send you a 6-digit code; no password needed. A new email gets a new account.</p>
      <form class="stack" method="post" action="/login">
        {csrfField(props.c)}
        <input type="hidden" name="next" value={props.next} />
        <label>
          Email
          <input type="email" name="email" autocomplete="email" required value={props.email ?? ''} />
        </label>
        <div>
          <button type="submit">Send code</button>
        </div>
      </form>
    </>
  );
}

function CodeForm(props: { c: Context<WebEnv>; next: string; email: string; error?: string }) {
  return (
    <>
      <CodeSentNotice email={props.email} error={props.error} />
      <form class="stack" method="post" action="/login/verify">
        {csrfField(props.c)}
        <input type="hidden" name="next" value={props.next} />
        <input type="hidden" name="email" value={props.email} />
        <CodeInput required />
        <div>
          <button type="submit">Sign in</button>
        </div>
      </form>
      <p>
        <a href={`/login?next=${encodeURIComponent(props.next)}`}>Use another email or send a new code</a>
      </p>
    </>
  );
}

const signInPage = (status: PageOptions['status'] = 200): PageOptions => ({ title: 'Sign in', status });

loginRoutes.get('/login', (c) => {
  const next = safeNext(c.req.query('next'));
  if (c.get('webSession')) return c.redirect(next, 303);
  return renderPage(c, signInPage(), <EmailForm c={c} next={next} />);
});

loginRoutes.post('/login', async (c) => {
  const ctx = c.get('ctx');
  const next = safeNext(await formString(c, 'next'));
  const raw = (await formString(c, 'email')) ?? '';
  const input = EmailInputSchema.safeParse({ email: raw });
  if (!input.success)
    return renderPage(c, signInPage(400), <EmailForm c={c} next={next} email={raw} error="Enter a valid email." />);
  try {
    // Every login limit lives in requestLoginCode: per address a 429, per email never (a quiet no-op).
    await requestLoginCode(ctx, input.data, { ip: clientIp(c) });
  } catch (e) {
    if (!(e instanceof SvcError && e.code === 'rate_limited')) throw e;
    c.header('retry-after', String(e.retryAfter ?? 60));
    return renderPage(c, signInPage(429), <EmailForm c={c} next={next} email={input.data.email} error={e.detail} />);
  }
  return renderPage(c, { title: 'Check your email' }, <CodeForm c={c} next={next} email={input.data.email} />);
});

loginRoutes.post('/login/verify', async (c) => {
  const ctx = c.get('ctx');
  const next = safeNext(await formString(c, 'next'));
  const email = EmailInputSchema.safeParse({ email: (await formString(c, 'email')) ?? '' });
  if (!email.success)
    return renderPage(c, signInPage(400), <EmailForm c={c} next={next} error="Enter a valid email." />);
  const input = LoginVerifyInputSchema.safeParse({ ...email.data, code: ((await formString(c, 'code')) ?? '').trim() });
  const again = (error: string, status: PageOptions['status']) =>
    renderPage(
      c,
      { title: 'Check your email', status },
      <CodeForm c={c} next={next} email={email.data.email} error={error} />,
    );
  if (!input.success) return again('The code is the 6 digits from the email.', 400);
  try {
    const login = await verifyLoginCode(ctx, input.data, { ip: clientIp(c) });
    setSessionCookie(c, login.session_token);
  } catch (e) {
    if (e instanceof SvcError && e.code === 'invalid_code') return again('That code is wrong or expired.', 400);
    if (e instanceof SvcError && e.code === 'rate_limited') {
      c.header('retry-after', String(e.retryAfter ?? 60));
      return again(e.detail, 429);
    }
    if (e instanceof SvcError && e.code === 'too_many_attempts')
      return renderPage(
        c,
        signInPage(429),
        <EmailForm c={c} next={next} email={email.data.email} error="Too many wrong codes: send a new code." />,
      );
    throw e;
  }
  return c.redirect(next, 303);
});

loginRoutes.post('/logout', async (c) => {
  const session = c.get('webSession');
  if (session) await endSession(c.get('ctx'), session.principal);
  clearSessionCookie(c);
  return c.redirect('/', 303);
});

loginRoutes.post('/logout/all', async (c) => {
  const session = c.get('webSession');
  if (session) await endAllSessions(c.get('ctx'), session.principal);
  clearSessionCookie(c);
  return c.redirect('/', 303);
});
