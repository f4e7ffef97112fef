/**
 * The browser side of `svc login` (docs/cli.md "How svc login works"), on the web layout and cookie session:
 * /cli/login asks a signed-in person to confirm the CLI waiting on a loopback port, then redirects there with a
 * one-time code; /cli/device takes the short code a terminal without a browser shows. The rules live in
 * sessions/cli-login.service.ts; sign-in and CSRF come from the web layer.
 */
import type { Context } from 'hono';
import { withLoginVerifyLimit } from '../auth/abuse-limits.js';
import { clientIp } from '../lib/client-ip.js';
import { SvcError } from '../../core/errors.js';
import { assertLoginRequest, confirmDevice, issueCliCode } from '../sessions/cli-login.service.js';
import { csrfField } from './csrf.js';
import { formString } from './form.js';
import { renderPage } from './layout.js';
import { allowFormRedirectTo } from './security-headers.js';
import { newWebRouter, type WebEnv } from './web-env.js';
import { requireWebSession } from './web-session.js';

export const cliLoginPages = newWebRouter();

const LOGIN_FIELDS = ['redirect_uri', 'state', 'code_challenge', 'code_challenge_method'] as const;

function Hidden(props: { fields: Record<string, string> }) {
  return (
    <>
      {Object.entries(props.fields).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
    </>
  );
}

async function loginFields(c: Context<WebEnv>, from: 'query' | 'form'): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k of LOGIN_FIELDS) {
    const v = from === 'query' ? c.req.query(k) : await formString(c, k);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

cliLoginPages.get('/cli/login', async (c) => {
  const fields = await loginFields(c, 'query');
  const req = assertLoginRequest(fields);
  requireWebSession(c, '/cli/login');
  const session = c.get('webSession')!;
  // The confirm post is answered with a redirect to the CLI's loopback origin: CSP form-action must allow it.
  allowFormRedirectTo(c, req.redirectUri);
  return renderPage(
    c,
    { title: 'Sign in the svc CLI on this computer?' },
    <>
      <p>
        Signed in as <strong>{session.email}</strong> ({session.orgName}). The svc command-line tool waiting on this
        computer will act with your account's full access, as you do here.
      </p>
      <form class="stack" method="post" action="/cli/login">
        {csrfField(c)}
        <Hidden fields={fields} />
        <div>
          <button type="submit">Confirm</button>
        </div>
      </form>
      <p>
        Did not just run <code>svc login</code>? Close this page; nothing happens.
      </p>
    </>,
  );
});

cliLoginPages.post('/cli/login', async (c) => {
  const p = requireWebSession(c, '/dashboard');
  const req = assertLoginRequest(await loginFields(c, 'form'));
  const code = await issueCliCode(c.get('ctx'), p, req);
  const to = new URL(req.redirectUri);
  to.searchParams.set('code', code);
  to.searchParams.set('state', req.state);
  return c.redirect(to.toString(), 303);
});

function DeviceForm(props: { c: Context<WebEnv>; error?: string }) {
  return (
    <>
      {props.error ? (
        <p class="notice error" role="alert">
          {props.error}
        </p>
      ) : null}
      <p>
        Enter the code that <code>svc login</code> shows in your terminal.
      </p>
      <form class="stack" method="post" action="/cli/device">
        {csrfField(props.c)}
        <label>
          Code
          <input name="user_code" placeholder="ABCD-EFGH" autocomplete="off" required />
        </label>
        <div>
          <button type="submit">Confirm</button>
        </div>
      </form>
    </>
  );
}

cliLoginPages.get('/cli/device', (c) => {
  requireWebSession(c, '/cli/device');
  return renderPage(c, { title: 'Connect the svc CLI' }, <DeviceForm c={c} />);
});

cliLoginPages.post('/cli/device', async (c) => {
  const p = requireWebSession(c, '/cli/device');
  const ctx = c.get('ctx');
  const code = (await formString(c, 'user_code')) ?? '';
  try {
    // Wrong user codes count against the address like wrong login codes do, so guessing one is rate limited.
    await withLoginVerifyLimit(ctx, clientIp(c), async () => {
      if (!(await confirmDevice(ctx, p, code))) throw new SvcError('invalid_code', 'That code is wrong or expired');
    });
  } catch (e) {
    if (!(e instanceof SvcError && e.code === 'invalid_code')) throw e;
    return renderPage(
      c,
      { title: 'Connect the svc CLI', status: 400 },
      <DeviceForm c={c} error="That code is wrong or expired: check the terminal." />,
    );
  }
  return renderPage(
    c,
    { title: 'The svc CLI is signed in' },
    <p>You can close this window and go back to the terminal.</p>,
  );
});
