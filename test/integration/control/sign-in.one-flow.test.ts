/**
 * One sign-in flow (issue 22 item 3, docs/identity.md "Login limits"): POST /v1/auth/login/*, the /login page, the
 * OAuth step-up form and `svc login --email` all ask the sessions service for a code and answer one email the same
 * way at production limits (SVC_LOGIN_RATE_PER_HOUR unset, so 5): every request succeeds, 5 codes are mailed per
 * hour and then nothing more, the last mailed code still signs in, and only the address limit (50 an hour) is a 429.
 * Everything here comes from one address (127.0.0.1), so the tests share its budget in order: 4 × 7 + 8 + 1 requests
 * before the last test spends the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepUpScope } from '../../../control/oauth/step-up.js';
import { runSvc, tempHome } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { Browser, authorizePath, discover, formFields, pkcePair, registerClient } from '../../helpers/oauth.js';
import { loginCodeOf, type ReceivedMail } from '../../helpers/smtp-sink.js';
import { newEmail, startOAuthFixture, type OAuthFixture } from '../oauth/fixture.js';

/** The documented defaults: 5 codes mailed per email per hour, 10 × 5 requests per address per hour. */
const MAILS_PER_EMAIL = 5;
const REQUESTS_PER_ADDRESS = 50;

let f: OAuthFixture;
let metadata: Record<string, any>;
let clientId: string;
const redirectUri = 'http://127.0.0.1:33422/cb';
const cli = tempHome();

beforeAll(async () => {
  f = await startOAuthFixture();
  metadata = await discover(f.h.control.url);
  clientId = (await registerClient(metadata, { client_name: 'Sign-in flow agent', redirect_uris: [redirectUri] })).body
    .client_id;
});
afterAll(async () => {
  await f.stop();
  cli.cleanup();
});

/** What a surface did with one request for a code, in the terms every surface shares. */
type Requested = { outcome: 'asked' | 'rate_limited' | 'refused'; status: number };

interface Surface {
  name: string;
  /** The answer a request for a code gets when it is accepted (HTTP status, or the CLI's exit code). */
  accepted: number;
  /** The answer when the address is over its limit. */
  limited: number;
  request(email: string): Promise<Requested>;
  /** Signs in (or, for the step-up, proves the email and approves) with `code`; true when it worked. */
  signIn(email: string, code: string): Promise<boolean>;
}

const rest: Surface = {
  name: 'POST /v1/auth/login/*',
  accepted: 202,
  limited: 429,
  async request(email) {
    const r = await call(f.h.control.url, 'POST', '/v1/auth/login/request', { body: { email } });
    return {
      outcome: r.status === 202 ? 'asked' : r.body?.code === 'rate_limited' ? 'rate_limited' : 'refused',
      status: r.status,
    };
  },
  async signIn(email, code) {
    const r = await call(f.h.control.url, 'POST', '/v1/auth/login/verify', { body: { email, code } });
    return r.status === 200 && /^sess_/.test(r.body.session_token);
  },
};

/** Where a page surface keeps its browser and code form between the request and the code, per email. */
type CodeForms = Map<string, { browser: Browser; codePage: string }>;

/** A page's answer to a code request: the code form (kept for the sign-in step), or a refusal. */
async function pageAnswer(res: Response, browser: Browser, email: string, kept: CodeForms): Promise<Requested> {
  const html = await res.text();
  if (res.status === 200) {
    expect(html).toMatch(/<input[^>]+name="code"/);
    kept.set(email, { browser, codePage: html });
    return { outcome: 'asked', status: 200 };
  }
  return {
    outcome: res.status === 429 && res.headers.get('retry-after') ? 'rate_limited' : 'refused',
    status: res.status,
  };
}

/** The /login page keeps its browser between the request and the code, as a person's would. */
const webBrowsers: CodeForms = new Map();
const web: Surface = {
  name: 'the /login page',
  accepted: 200,
  limited: 429,
  async request(email) {
    const browser = new Browser(f.h.control.url);
    const page = await (await browser.request('GET', '/login')).text();
    const res = await browser.request('POST', '/login', { ...formFields(page, '/login'), email });
    return pageAnswer(res, browser, email, webBrowsers);
  },
  async signIn(email, code) {
    const { browser, codePage } = webBrowsers.get(email)!;
    const res = await browser.request('POST', '/login/verify', { ...formFields(codePage, '/login/verify'), code });
    if (res.status !== 303) return false;
    // The cookie it set is a live session: the dashboard opens instead of sending the browser to /login.
    return (await browser.request('GET', '/dashboard')).status === 200;
  },
};

/** The step-up keeps its browser and authorization request between the email and the code. */
const stepUps: CodeForms = new Map();
const oauthStepUp: Surface = {
  name: 'the OAuth step-up form',
  accepted: 200,
  limited: 429,
  async request(email) {
    const reg = await call(f.h.control.url, 'POST', '/v1/register');
    const scope = await stepUpScope(f.tokenCtx, { keyId: reg.body.key_id, plaintext: reg.body.api_key });
    const path = authorizePath(metadata, { clientId, redirectUri, challenge: pkcePair().challenge, scope });
    const browser = new Browser(f.h.control.url);
    const first = await browser.request('GET', path);
    expect(first.status).toBe(200);
    const emailPage = await first.text();
    const res = await browser.request('POST', '/oauth/authorize/email', {
      ...formFields(emailPage, '/oauth/authorize/email'),
      email,
    });
    return pageAnswer(res, browser, email, stepUps);
  },
  async signIn(email, code) {
    const { browser, codePage } = stepUps.get(email)!;
    const res = await browser.request('POST', '/oauth/authorize', {
      ...formFields(codePage, '/oauth/authorize'),
      code,
      decision: 'approve',
    });
    return res.status === 303 && new URL(res.headers.get('location')!).searchParams.has('code');
  },
};

const svcLogin: Surface = {
  name: 'svc login --email',
  accepted: 0,
  limited: 1,
  async request(email) {
    const run = await runSvc(['login', '--email', email, '--json'], {
      home: cli.home,
      env: { SVC_API_URL: f.h.control.url },
    });
    const out = run.json();
    if (run.code === 0) {
      expect(out).toEqual({ ok: true, data: { status: 'code_sent', email } });
      return { outcome: 'asked', status: 0 };
    }
    return { outcome: out.error?.code === 'rate_limited' ? 'rate_limited' : 'refused', status: run.code ?? -1 };
  },
  async signIn(email, code) {
    const run = await runSvc(['login', '--email', email, '--code', code, '--json'], {
      home: cli.home,
      env: { SVC_API_URL: f.h.control.url },
    });
    return run.code === 0 && run.json().ok === true;
  },
};

const SURFACES = [rest, web, oauthStepUp, svcLogin];

const mailsTo = (email: string): ReceivedMail[] => f.smtp.mails.filter((m) => m.to.includes(email));

/**
 * Waits (bounded) until `n` login mails reached `email`, then a little longer, and returns exactly what arrived:
 * mail goes out after the answer, so a sixth mail sent by mistake would show up in that extra wait.
 */
async function settledMails(email: string, n: number): Promise<ReceivedMail[]> {
  const deadline = Date.now() + 10_000;
  while (mailsTo(email).length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 400));
  return mailsTo(email);
}

describe('one sign-in flow: every surface answers one email the same way', () => {
  for (const surface of SURFACES)
    it(`${surface.name}: 7 requests all succeed, 5 codes are mailed, and the last one signs in`, async () => {
      const email = newEmail('flow');
      const answers: Requested[] = [];
      for (let i = 0; i < MAILS_PER_EMAIL + 2; i++) answers.push(await surface.request(email));
      expect(answers).toEqual(Array(MAILS_PER_EMAIL + 2).fill({ outcome: 'asked', status: surface.accepted }));
      const mails = await settledMails(email, MAILS_PER_EMAIL);
      expect(mails).toHaveLength(MAILS_PER_EMAIL);
      expect(await surface.signIn(email, loginCodeOf(mails.at(-1)!))).toBe(true);
    });

  it('the surfaces share one per-email count: past 5 codes an hour, none of them mails another', async () => {
    const email = newEmail('shared');
    const answers: string[] = [];
    for (let i = 0; i < MAILS_PER_EMAIL + 3; i++) {
      const surface = SURFACES[i % SURFACES.length]!;
      const a = await surface.request(email);
      answers.push(`${surface.name}: ${a.outcome} ${a.status}`);
    }
    expect(answers).toEqual(
      Array.from({ length: MAILS_PER_EMAIL + 3 }, (_, i) => {
        const s = SURFACES[i % SURFACES.length]!;
        return `${s.name}: asked ${s.accepted}`;
      }),
    );
    const mails = await settledMails(email, MAILS_PER_EMAIL);
    expect(mails).toHaveLength(MAILS_PER_EMAIL);
    // The last code mailed (by the fifth request, the /v1 route's turn) works on another surface.
    expect(await web.signIn(email, loginCodeOf(mails.at(-1)!))).toBe(true);
  });

  it("a stranger attaching someone's email to its own org (POST /v1/auth/email) does not spend that email's sign-in", async () => {
    const email = newEmail('attached');
    const stranger = await call(f.h.control.url, 'POST', '/v1/register');
    const attach = [];
    for (let i = 0; i < MAILS_PER_EMAIL + 1; i++)
      attach.push(
        (await call(f.h.control.url, 'POST', '/v1/auth/email', { token: stranger.body.api_key, body: { email } }))
          .status,
      );
    // The verification mail has its own per-email limit (it is not a login code)...
    expect(attach).toEqual([...Array(MAILS_PER_EMAIL).fill(202), 429]);
    // ...and the person's step-up still mails a code that proves the email.
    expect(await oauthStepUp.request(email)).toEqual({ outcome: 'asked', status: 200 });
    const mail = await f.smtp.waitFor(email, /login code/i);
    expect(await oauthStepUp.signIn(email, loginCodeOf(mail))).toBe(true);
  });

  it('only the address limit is a 429, the same on every surface, with Retry-After', async () => {
    let spent = 0;
    let last: Requested = { outcome: 'asked', status: 202 };
    // Spend what is left of this address's hour on fresh emails (bounded by the limit itself).
    while (last.outcome === 'asked' && spent < REQUESTS_PER_ADDRESS) {
      last = await rest.request(newEmail('spend'));
      spent++;
    }
    expect(last).toEqual({ outcome: 'rate_limited', status: 429 });
    for (const surface of SURFACES)
      expect(await surface.request(newEmail('limited')), surface.name).toEqual({
        outcome: 'rate_limited',
        status: surface.limited,
      });
  });
});
