import { execFile, spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SVC_BIN, type Stack, runSvc, startStack, tempHome } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { ROOT } from '../../helpers/processes.js';
import { type SmtpSink, loginCodeOf, startSmtpSink } from '../../helpers/smtp-sink.js';
import { WebClient, csrfOf } from '../../helpers/web-client.js';

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
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)].map((m) => [
      m[1]!,
      m[2]!.replace(/&amp;/g, '&'),
    ]),
  );

describe('svc login in the browser', () => {
  let stack: Stack;
  let smtp: SmtpSink;
  let web: WebClient;
  const { home, cleanup } = tempHome();

  beforeAll(async () => {
    smtp = await startSmtpSink();
    stack = await startStack({ SVC_SMTP_URL: smtp.url });
    web = new WebClient(stack.control);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await smtp?.close();
    cleanup();
  });

  it('signs in by email code on the page, confirms, and the CLI stores a session from the loopback callback', async () => {
    const login = startLogin([], home, stack);
    const url = new URL((await login.waitStderr(/Open: (\S+)/))[1]!);
    expect(url.pathname + url.search).toMatch(
      /^\/cli\/login\?redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fcallback&state=.+&code_challenge=.+&code_challenge_method=S256$/,
    );

    // Not signed in: the page sends the person to sign in and back.
    const first = await web.get(url.pathname + url.search);
    expect(first.status).toBe(303);
    expect(first.location).toMatch(/^\/login\?next=/);
    const signIn = await web.get(first.location!);
    const next = hiddenFields(signIn.html).next!;
    await web.post('/login', { email: 'cli@example.com', next, csrf_token: csrfOf(signIn.html) });
    const code = loginCodeOf(await smtp.waitFor('cli@example.com'));
    const signedIn = await web.post('/login/verify', {
      email: 'cli@example.com',
      code,
      next,
      csrf_token: csrfOf(signIn.html),
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe(url.pathname + url.search);

    const confirmPage = await web.get(signedIn.location!);
    expect(confirmPage.html).toContain('Sign in the svc CLI on this computer?');
    expect(confirmPage.headers.get('content-security-policy')).toMatch(/form-action 'self' http:\/\/127\.0\.0\.1:\d+/);
    const fields = hiddenFields(confirmPage.html);
    const { csrf_token: _csrf, ...withoutCsrf } = fields;
    expect((await web.post('/cli/login', withoutCsrf)).status).toBe(403);

    const confirmed = await web.post('/cli/login', fields);
    expect(confirmed.status).toBe(303);
    const callback = new URL(confirmed.location!);
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

  it('a sign-in into another org sets the registered key aside and stores one of its own, so svc call spends what svc balance shows', async () => {
    const other = tempHome();
    const svc = (...args: string[]) => runSvc(args, { home: other.home, stack });
    const file = join(other.home, '.svc/config.json');
    const keyOrg = async (key: string) =>
      (await call(stack.control, 'GET', '/v1/me', { token: key })).body.org.id as string;
    try {
      const reg = (await svc('register', '--json')).json().data;
      await svc('login', '--email', 'newcomer@example.com', '--json');
      const code = loginCodeOf(await smtp.waitFor('newcomer@example.com'));
      const login = await svc('login', '--email', 'newcomer@example.com', '--code', code, '--json');
      expect(login.code).toBe(0);
      const signedIn = login.json().data;
      expect(signedIn).toMatchObject({ key_created: true, previous_key_org_id: reg.org_id });
      expect(signedIn.org_id).not.toBe(reg.org_id);
      const stored = JSON.parse(readFileSync(file, 'utf8'));
      expect(stored.previousApiKey).toBe(reg.api_key);
      expect(stored.apiKey).not.toBe(reg.api_key);
      expect(await keyOrg(stored.apiKey)).toBe(signedIn.org_id);
      expect(statSync(file).mode & 0o777).toBe(0o600);

      // Credits bought for the signed-in org pay for `svc call`: the newcomer path of docs/cli.md.
      await promisify(execFile)(
        process.execPath,
        [join(ROOT, 'dist/control/admin/main.js'), 'credits', 'grant', signedIn.org_id, '10', '--reason', 'cli e2e'],
        { env: stack.env },
      );
      const paid = await svc('call', 'demo-weather', 'forecast', '-q', 'city=porto', '--json');
      expect(paid.code).toBe(0);
      expect(paid.json().data).toMatchObject({ status: 200, charged_cents: 2 });
      expect((await svc('balance', '--json')).json().data.credit_cents).toBe(signedIn.new_account ? 58 : 8);

      // Signing in again to the same org keeps the key it has.
      await svc('login', '--email', 'newcomer@example.com', '--json');
      const again = loginCodeOf(await smtp.waitFor('newcomer@example.com'));
      const relogin = (await svc('login', '--email', 'newcomer@example.com', '--code', again, '--json')).json().data;
      expect(relogin).toMatchObject({ key_created: false, key_id: signedIn.key_id, previous_key_org_id: null });
      expect(JSON.parse(readFileSync(file, 'utf8')).apiKey).toBe(stored.apiKey);

      // Signed in with no key stored, `svc provision` makes one for the session's org, not a new anonymous org.
      const { apiKey: _dropped, ...rest } = JSON.parse(readFileSync(file, 'utf8'));
      writeFileSync(file, JSON.stringify(rest), { mode: 0o600 });
      const provisioned = await svc('provision', '--json');
      expect(provisioned.json().data).toMatchObject({ key_created: true });
      expect(await keyOrg(JSON.parse(readFileSync(file, 'utf8')).apiKey)).toBe(signedIn.org_id);
    } finally {
      other.cleanup();
    }
  });

  it('svc verify --email mails a token for a registered org; --token elevates its key, and checkout becomes the next step', async () => {
    const other = tempHome();
    const svc = (...args: string[]) => runSvc(args, { home: other.home, stack });
    try {
      const reg = (await svc('register', '--json')).json().data;
      const refused = await svc('call', 'demo-weather', 'forecast', '-q', 'city=porto', '--json');
      expect(refused.json().error).toMatchObject({
        code: 'insufficient_credits',
        next: 'svc verify --email <your email>',
      });
      // A second key of the org, in the gateway's cache before the verification: no scope of it changes then.
      const second = (await svc('keys', 'create', '--name', 'second', '--json')).json().data.api_key as string;
      const withSecond = () =>
        runSvc(['call', 'demo-weather', 'forecast', '-q', 'city=porto', '--json'], {
          home: other.home,
          stack,
          env: { SVC_API_KEY: second },
        });
      expect((await withSecond()).json().error.next).toMatch(/^svc verify --email/);
      expect((await svc('verify', '--json')).code).toBe(2);
      const sent = await svc('verify', '--email', 'agent-owner@example.com', '--json');
      expect(sent.json().data).toEqual({ status: 'verification_sent', email: 'agent-owner@example.com' });
      const mail = await smtp.waitFor('agent-owner@example.com');
      const token = /svc verify --token (\S+)/.exec(mail.text)![1]!;
      const verified = await svc('verify', '--token', token, '--json');
      expect(verified.code).toBe(0);
      expect(verified.json().data.elevated_key_ids).toContain(reg.key_id);
      const me = (await svc('whoami', '--json')).json().data;
      expect(me.credential.scopes).toContain('billing:write');
      expect(me.org.id).toBe(reg.org_id);
      // Gateways learn of the verification from the change feed (polled every 100 ms): a refused call is free.
      let after = await svc('call', 'demo-weather', 'forecast', '-q', 'city=porto', '--json');
      for (let i = 0; i < 40 && after.json().error?.next?.startsWith('svc verify'); i++) {
        await new Promise((r) => setTimeout(r, 50));
        after = await svc('call', 'demo-weather', 'forecast', '-q', 'city=porto', '--json');
      }
      let afterSecond = await withSecond();
      for (let i = 0; i < 40 && afterSecond.json().error?.next?.startsWith('svc verify'); i++) {
        await new Promise((r) => setTimeout(r, 50));
        afterSecond = await withSecond();
      }
      expect(afterSecond.json().error?.next ?? 'charged').not.toMatch(/^svc verify/);
      if (me.balance.credit_cents >= 2) expect(after.json().data).toMatchObject({ status: 200, charged_cents: 2 });
      else
        expect(after.json().error).toMatchObject({
          code: 'insufficient_credits',
          next: 'svc billing checkout --pack starter',
        });
    } finally {
      other.cleanup();
    }
  });

  it('refuses a redirect_uri that is not loopback http', async () => {
    const bad = await web.get(
      `/cli/login?redirect_uri=${encodeURIComponent('https://evil.example/callback')}&state=abcdefghij&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`,
    );
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('validation_failed');
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

      const page = await web.get(new URL(uri!).pathname);
      expect(page.status).toBe(200);
      const wrong = await web.post('/cli/device', { csrf_token: csrfOf(page.html), user_code: 'ZZZZ-ZZZZ' });
      expect(wrong.status).toBe(400);
      const ok = await web.post('/cli/device', { csrf_token: csrfOf(page.html), user_code: userCode!.toLowerCase() });
      expect(ok.status).toBe(200);
      const done = await login.exit;
      expect(done.code).toBe(0);
      expect(JSON.parse(readFileSync(join(other.home, '.svc/config.json'), 'utf8')).sessionToken).toMatch(/^sess_/);
    } finally {
      other.cleanup();
    }
  });
});
