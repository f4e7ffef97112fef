/**
 * Issue 24 item 3 against the real stack, as a person types it: each case names what it did before the fix.
 * Views and wording a unit can hold are in test/unit/cli/views.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SVC_BIN, type Stack, runSvc, startStack, tempHome } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { type SmtpSink, loginCodeOf, startSmtpSink, verifyTokenOf } from '../../helpers/smtp-sink.js';
import { openTerminal } from '../../helpers/terminal.js';

describe('svc, the first hour', () => {
  let stack: Stack;
  let smtp: SmtpSink;
  const homes: (() => void)[] = [];
  const person = () => {
    const h = tempHome();
    homes.push(h.cleanup);
    return {
      home: h.home,
      svc: (...args: string[]) => runSvc(args, { home: h.home, stack }),
      file: join(h.home, '.svc', 'config.json'),
    };
  };
  async function signIn(p: ReturnType<typeof person>, email: string) {
    expect((await p.svc('login', '--email', email, '--json')).code).toBe(0);
    const code = loginCodeOf(await smtp.waitFor(email));
    const r = await p.svc('login', '--email', email, '--code', code, '--json');
    expect(r.code).toBe(0);
    return r.json().data;
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    stack = await startStack({ SVC_SMTP_URL: smtp.url });
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    await smtp?.close();
    for (const c of homes) c();
  });

  it('svc help works, and a typo gets "did you mean" (before: help was an unknown command)', async () => {
    const { svc } = person();
    const help = await svc('help', 'call');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('svc call');
    expect(help.stdout).toContain('EXAMPLES');
    expect((await svc('help')).stdout).toContain('leaderboard');
    const cmd = await svc('serch', 'weather');
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toContain("did you mean 'svc search'?");
    const flag = await svc('search', 'weather', '--limt', '3');
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('did you mean --limit?');
  });

  it('checks flag values before any request (before: --from yesterday and --limit abc reached the server)', async () => {
    const { home } = person();
    // No server at all: a checked flag fails with exit 2 before the connection is tried.
    const env = { SVC_API_URL: 'http://127.0.0.1:9' };
    const from = await runSvc(['usage', '--from', 'yesterday', '--json'], { home, env });
    expect(from.code).toBe(2);
    expect(from.json().error).toMatchObject({ code: 'usage_error', message: expect.stringContaining('--from') });
    const limit = await runSvc(['search', 'weather', '--limit', 'abc', '--json'], { home, env });
    expect(limit.code).toBe(2);
    expect(limit.json().error.message).toContain("--limit takes a whole number, e.g. 10; got 'abc'");
    const board = await runSvc(['market', 'activity', '--limit', '-3'], { home, env });
    expect(board.code).toBe(2);
  });

  it('svc call --json keeps the upstream body, request id and charge when the upstream answers 400', async () => {
    const { svc } = person();
    await svc('register');
    // The demo upstream answers 400 without ?city.
    const r = await svc('call', 'demo-weather', 'current', '--json');
    expect(r.code).toBe(1);
    const doc = r.json();
    expect(doc.ok).toBe(false);
    expect(doc.error).toMatchObject({
      code: 'upstream_status',
      status: 400,
      request_id: expect.stringMatching(/^req_/),
    });
    expect(doc.data).toMatchObject({
      status: 400,
      request_id: doc.error.request_id,
      charged_cents: 0,
      body: { error: 'query parameter city is required' },
    });
  });

  it('errors for people name flags and commands, not HTTP (before: header names, "Send Authorization: Bearer")', async () => {
    const { svc, home } = person();
    await svc('register');
    const dear = await svc('call', 'demo-weather', 'forecast', '-q', 'city=porto', '--max-price', '1');
    expect(dear.code).toBe(1);
    expect(dear.stderr).toContain('above your --max-price of 1');
    expect(dear.stderr).toContain('next: svc call demo-weather forecast --quote\n');
    const bad = await runSvc(['whoami'], { home, stack, env: { SVC_API_KEY: `svc_live_${'x'.repeat(24)}` } });
    expect(bad.code).toBe(1);
    for (const r of [dear, bad]) {
      expect(r.stderr).not.toMatch(/X-Svc|Authorization|Bearer|\/v1\/|\(\d{3} /);
      expect(r.stderr).not.toContain('`');
    }
  });

  it('svc call on a terminal puts the status line under the body (before: glued to its last line)', async () => {
    const { svc, home } = person();
    await svc('register');
    const env = `env -i HOME=${home} NO_COLOR=1 PATH=/usr/bin:/bin SVC_API_URL=${stack.control} SVC_GATEWAY_URL=${stack.gateway}`;
    const term = await openTerminal(
      `sh -c '${env} ${process.execPath} ${SVC_BIN} call demo-weather current -q city=lisbon; echo; echo DONE; sleep 30'`,
    );
    try {
      const screen = await term.waitFor('DONE');
      expect(screen).toMatch(/"city":"lisbon"[^\n]*\}\s*\n200 · charged \$0\.00/);
    } finally {
      await term.close();
    }
  });

  it('svc signup then svc verify --token says how to sign in, and that command works (before: nothing stored, no hint)', async () => {
    const { svc } = person();
    const email = 'first-hour-signup@example.com';
    const up = await svc('signup', '--email', email, '--name', 'Ada');
    expect(up.code).toBe(0);
    expect(up.stdout).toContain('Next: svc verify --token <token from the mail>');
    const token = verifyTokenOf(await smtp.waitFor(email));
    const verified = await svc('verify', '--token', token);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain(`Next: svc login --email ${email}`);
    const asJson = await svc('login', '--email', email, '--json');
    expect(asJson.code).toBe(0);
    expect(asJson.json().data.status).toBe('code_sent');
  });

  it('svc logout --all clears previousApiKey and revokes the "svc CLI" key (before: both stayed live)', async () => {
    const p = person();
    const reg = (await p.svc('register', '--json')).json().data;
    const signedIn = await signIn(p, 'first-hour-logout@example.com');
    const stored = JSON.parse(readFileSync(p.file, 'utf8'));
    expect(stored.previousApiKey).toBe(reg.api_key);
    expect(signedIn.key_created).toBe(true);
    const cliKey = stored.apiKey as string;
    expect((await call(stack.control, 'GET', '/v1/me', { token: cliKey })).status).toBe(200);

    const out = await p.svc('logout', '--all', '--json');
    expect(out.code).toBe(0);
    expect(out.json().data).toEqual({
      session_ended: true,
      key_cleared: true,
      previous_key_cleared: true,
      key_revoked: signedIn.key_id,
    });
    expect(JSON.parse(readFileSync(p.file, 'utf8'))).toEqual({});
    expect((await call(stack.control, 'GET', '/v1/me', { token: cliKey })).status).toBeGreaterThanOrEqual(401);
    // The registered key was made elsewhere: forgotten here, still the agent's.
    expect((await call(stack.control, 'GET', '/v1/me', { token: reg.api_key })).status).toBe(200);
  });

  it('svc billing checkout prints the pay sentence and its URL on one line of one stream (before: split)', async () => {
    const p = person();
    await signIn(p, 'first-hour-checkout@example.com');
    const r = await p.svc('billing', 'checkout', '--pack', 'starter');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^Pay \$5\.00 for \$5\.00 in credits on this page: http\S+$/m);
    expect(r.stdout).not.toContain('Pay');
    expect(r.stdout).not.toContain('above');
  });
});
