import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SVC_BIN, type Stack, runSvc, startStack, tempHome } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { type SmtpSink, loginCodeOf, startSmtpSink } from '../../helpers/smtp-sink.js';

/** Starts `svc login …` and hands back its stderr as it grows and its exit. */
function startLogin(args: string[], home: string, stack: Stack) {
  const child = spawn(process.execPath, [SVC_BIN, 'login', ...args, '--json'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      NO_COLOR: '1',
      SVC_API_URL: stack.control,
      SVC_GATEWAY_URL: stack.gateway,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const exit = new Promise<{ code: number | null; json: any }>((resolve) =>
    child.on('close', (code) => resolve({ code, json: out ? JSON.parse(out) : null })),
  );
  const waitStderr = async (re: RegExp): Promise<RegExpExecArray> => {
    for (let i = 0; i < 200; i++) {
      const m = re.exec(err);
      if (m) return m;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`svc login never printed ${re}: ${err}`);
  };
  return { exit, waitStderr, kill: () => child.kill() };
}

const hiddenFields = (html: string) =>
  Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
      m[1]!,
      m[2]!.replace(/&amp;/g, '&'),
    ]),
  );

describe('svc login in the browser', () => {
  let stack: Stack;
  let smtp: SmtpSink;
  let cookie = '';
  const { home, cleanup } = tempHome();

  beforeAll(async () => {
    smtp = await startSmtpSink();
    stack = await startStack({ SVC_SMTP_URL: smtp.url });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await smtp?.close();
    cleanup();
  });

  const form = (path: string, fields: Record<string, string>) =>
    fetch(stack.control + path, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
      body: new URLSearchParams(fields),
    });

  it('signs in by email code on the page, confirms, and the CLI stores a session from the loopback callback', async () => {
    const login = startLogin([], home, stack);
    const url = (await login.waitStderr(/Open: (\S+)/))[1]!;
    expect(url).toMatch(
      /\/cli\/login\?redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fcallback&state=.+&code_challenge=.+&code_challenge_method=S256/,
    );

    const signIn = await (await fetch(url)).text();
    expect(signIn).toContain('Email me a code');
    const next = hiddenFields(signIn).next!;
    await form('/cli/signin', { next, email: 'cli@example.com' });
    const code = loginCodeOf(await smtp.waitFor('cli@example.com'));
    const signedIn = await form('/cli/signin', { next, email: 'cli@example.com', code });
    expect(signedIn.status).toBe(303);
    cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    expect(signedIn.headers.get('set-cookie')).toMatch(/HttpOnly/i);

    const confirmPage = await (
      await fetch(stack.control + signedIn.headers.get('location')!, { headers: { cookie } })
    ).text();
    expect(confirmPage).toContain('Sign in the svc CLI on this computer?');
    const fields = hiddenFields(confirmPage);
    const { csrf: _csrf, ...withoutCsrf } = fields;
    expect((await form('/cli/login/confirm', withoutCsrf)).status).toBe(403);

    const confirmed = await form('/cli/login/confirm', fields);
    expect(confirmed.status).toBe(303);
    const callback = new URL(confirmed.headers.get('location')!);
    expect(callback.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(callback.searchParams.get('state')).toBe(fields.state);
    expect((await fetch(callback)).status).toBe(200);

    const done = await login.exit;
    expect(done.code).toBe(0);
    expect(done.json.data.org_id).toMatch(/^org_/);
    expect(JSON.parse(readFileSync(join(home, '.svc/config.json'), 'utf8')).sessionToken).toMatch(/^sess_/);
    const me = await runSvc(['whoami', '--json'], { home, stack });
    expect(me.json().data).toMatchObject({ user: { email: 'cli@example.com' }, credential: { type: 'session' } });

    // The one-time code is spent, and it was bound to the CLI's verifier.
    const again = await call(stack.control, 'POST', '/v1/auth/cli/token', {
      body: {
        code: callback.searchParams.get('code'),
        code_verifier: 'x'.repeat(43),
        redirect_uri: `${callback.origin}/callback`,
      },
    });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('invalid_grant');
  });

  it('refuses a redirect_uri that is not loopback http', async () => {
    const bad = await call(
      stack.control,
      'GET',
      `/cli/login?redirect_uri=${encodeURIComponent('https://evil.example/callback')}&state=abcdefghij&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });

  it('--no-browser shows a code to enter on /cli/device and polls until the person confirms', async () => {
    const other = tempHome();
    try {
      const login = startLogin(['--no-browser'], other.home, stack);
      const [, uri, userCode] = await login.waitStderr(
        /Open (\S+) in a browser and enter the code ([A-Z0-9]{4}-[A-Z0-9]{4})/,
      );
      expect(uri).toBe(`${stack.control}/cli/device`);
      const pending = await call(stack.control, 'POST', '/v1/auth/cli/device');
      const early = await call(stack.control, 'POST', '/v1/auth/cli/token', {
        body: { device_code: pending.body.device_code },
      });
      expect(early.body.code).toBe('authorization_pending');

      const page = await (await fetch(uri!, { headers: { cookie } })).text();
      const wrong = await form('/cli/device', { ...hiddenFields(page), user_code: 'ZZZZ-ZZZZ' });
      expect(wrong.status).toBe(400);
      const ok = await form('/cli/device', { ...hiddenFields(page), user_code: userCode!.toLowerCase() });
      expect(ok.status).toBe(200);
      const done = await login.exit;
      expect(done.code).toBe(0);
      expect(JSON.parse(readFileSync(join(other.home, '.svc/config.json'), 'utf8')).sessionToken).toMatch(/^sess_/);
    } finally {
      other.cleanup();
    }
  });
});
