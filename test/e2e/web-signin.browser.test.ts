import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../helpers/harness.js';
import { loginCodeOf, startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import {
  axeViolations,
  firstLoadBytes,
  openBrowser,
  PHONE,
  screenshot,
  type BrowserSession,
} from '../helpers/browser.js';

let h: ControlHarness;
let smtp: SmtpSink;
let browser: BrowserSession;

beforeAll(async () => {
  smtp = await startSmtpSink();
  h = await startControl({ SVC_SMTP_URL: smtp.url });
  browser = await openBrowser({ viewport: PHONE });
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
  await smtp?.close();
});

describe('sign-in in a real browser', () => {
  it('a person signs in by keyboard with the mailed code, lands on the dashboard, and signs out', async () => {
    const { page } = browser;
    await page.goto(`${h.control.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'login-375');

    await page.getByLabel('Email').fill('browser@example.com');
    await page.keyboard.press('Enter');
    await page.getByLabel('Code from the email').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    const code = loginCodeOf(await smtp.waitFor('browser@example.com'));
    await page.getByLabel('Code from the email').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
    expect(await page.getByText('browser@example.com').first().isVisible()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'dashboard-signed-in-375');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${h.control.url}/`);
    await page.goto(`${h.control.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });

  it('the login page stays under 100 KB on first load and the CSP blocks nothing of ours', async () => {
    const blocked: string[] = [];
    browser.page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });
    expect(await firstLoadBytes(browser, `${h.control.url}/login`)).toBeLessThan(100 * 1024);
    await browser.page.goto(`${h.control.url}/login`);
    expect(blocked).toEqual([]);
  });
});
