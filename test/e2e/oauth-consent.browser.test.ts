/**
 * The OAuth authorization page in a real browser (Chromium): sign-in by the mailed code, the consent page, and
 * Approve ending at the client's loopback callback, which the page's CSP (form-action) must allow. Also the
 * step-up page a registered key's client sees. axe-core on every page; screenshots for a person to look at.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, openBrowser, PHONE, screenshot, type BrowserSession } from '../helpers/browser.js';
import { authorizePath, discover, exchangeCode, pkcePair, registerClient } from '../helpers/oauth.js';
import { loginCodeOf } from '../helpers/smtp-sink.js';
import { call } from '../helpers/http.js';
import { stepUpScope } from '../../control/oauth/step-up.js';
import { newEmail, startOAuthFixture, type OAuthFixture } from '../integration/oauth/fixture.js';

let f: OAuthFixture;
let browser: BrowserSession;
let callback: Server;
let redirectUri: string;
let metadata: Record<string, any>;
let clientId: string;
const cspReports: string[] = [];

beforeAll(async () => {
  f = await startOAuthFixture();
  callback = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('back in the app'));
  await new Promise<void>((r) => callback.listen(0, '127.0.0.1', r));
  redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  metadata = await discover(f.h.control.url);
  clientId = (await registerClient(metadata, { client_name: 'Browser Agent', redirect_uris: [redirectUri] })).body
    .client_id;
  browser = await openBrowser({ viewport: PHONE });
  browser.page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspReports.push(m.text());
  });
});
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => callback?.close(() => r()));
  await f?.stop();
});

describe('the authorization page in Chromium', () => {
  it('signs in by code, shows the consent, and Approve lands on the client callback with a code', async () => {
    const { page } = browser;
    const email = newEmail('browser-oauth');
    const { verifier, challenge } = pkcePair();
    await page.goto(f.h.control.url + authorizePath(metadata, { clientId, redirectUri, challenge, state: 'b1' }));
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('Email').fill(email);
    await page.keyboard.press('Enter');
    await page.getByLabel('Code from the email').waitFor();
    await page.getByLabel('Code from the email').fill(loginCodeOf(await f.smtp.waitFor(email, /code/i)));
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.getByRole('button', { name: 'Approve' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
    expect(await page.getByText('not verified by svc').isVisible()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'oauth-consent-375');

    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${redirectUri}?**`);
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe('b1');
    expect(back.searchParams.get('iss')).toBe(metadata.issuer);
    const token = await exchangeCode(metadata, {
      code: back.searchParams.get('code')!,
      verifier,
      clientId,
      redirectUri,
    });
    expect(token.status).toBe(200);
    expect(cspReports).toEqual([]);
  });

  it('the step-up page of a registered key verifies an email and approves in one form', async () => {
    const fresh = await openBrowser({ viewport: PHONE });
    try {
      const { page } = fresh;
      const reg = await call(f.h.control.url, 'POST', '/v1/register');
      const scope = await stepUpScope(f.tokenCtx, { keyId: reg.body.key_id, plaintext: reg.body.api_key });
      const email = newEmail('browser-stepup');
      await page.goto(
        f.h.control.url + authorizePath(metadata, { clientId, redirectUri, challenge: pkcePair().challenge, scope }),
      );
      expect(await page.getByText(reg.body.api_key.slice(0, 13)).first().isVisible()).toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, 'oauth-step-up-email-375');
      await page.getByLabel('Email').fill(email);
      await page.getByRole('button', { name: 'Send code' }).click();
      await page.getByLabel('Code from the email').waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, 'oauth-step-up-code-375');
      await page.getByLabel('Code from the email').fill(loginCodeOf(await f.smtp.waitFor(email, /code/i)));
      await page.getByRole('button', { name: 'Verify and approve' }).click();
      await page.waitForURL(`${redirectUri}?**`);
      expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
      const me = await call(f.h.control.url, 'GET', '/v1/me', { token: reg.body.api_key });
      expect(JSON.stringify(me.body)).toContain('billing:write');
    } finally {
      await fresh.close();
    }
  });
});
