/**
 * Issue 25 (Tests): axe finds no serious or critical issue on the main pages, error pages included, at 1280x800 and
 * 390x844; the home page's search works; every page stays under 60 KB of CSS and JS (pages ship no script).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../helpers/harness.js';
import { loginCodeOf, startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { expectAccessible, openBrowser } from '../helpers/browser.js';

let h: ControlHarness;
let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await startSmtpSink();
  h = await startControl({ SVC_SMTP_URL: smtp.url, SVC_DEMO: 'true' });
});
afterAll(async () => {
  await h?.stop();
  await smtp?.close();
});

const PUBLIC = [
  '/',
  '/catalog',
  '/apis/demo-weather',
  '/leaderboards',
  '/leaderboards/most_used',
  '/market',
  '/providers',
  '/login',
  '/no-such-page',
];
const PRIVATE = ['/dashboard', '/dashboard/keys', '/dashboard/terms', '/provider', '/provider/profile'];

describe.each([
  ['desktop', { width: 1280, height: 800 }],
  ['phone', { width: 390, height: 844 }],
])('the main pages at %s size', (size, viewport) => {
  it('have no serious or critical axe violation, and the home search finds the demo listing', async () => {
    const b = await openBrowser({ viewport });
    try {
      const { page } = b;
      let cssJs = 0;
      page.on('response', async (r) => {
        const type = r.headers()['content-type'] ?? '';
        if (/css|javascript/.test(type)) cssJs += (await r.body().catch(() => Buffer.alloc(0))).length;
      });
      for (const path of PUBLIC) {
        cssJs = 0;
        await page.goto(h.control.url + path, { waitUntil: 'load' });
        await expectAccessible(page, `${path} (${size})`);
        expect(cssJs).toBeLessThan(60 * 1024);
      }
      await page.goto(`${h.control.url}/`);
      await page.getByLabel('Search APIs').fill('weather');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL('**/catalog?q=weather');
      expect(await page.getByRole('link', { name: 'Demo Weather' }).count()).toBeGreaterThan(0);

      const email = `pages-${size}@example.com`;
      await page.goto(`${h.control.url}/login`);
      await page.getByLabel('Email').fill(email);
      await page.getByRole('button', { name: 'Send code' }).click();
      await page.getByLabel('Code from the email').fill(loginCodeOf(await smtp.waitFor(email)));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/dashboard');
      for (const path of PRIVATE) {
        await page.goto(h.control.url + path, { waitUntil: 'load' });
        await expectAccessible(page, `${path} (${size})`);
      }
      // A refused form (errors beside the fields) is accessible too.
      await page.goto(`${h.control.url}/dashboard/keys`);
      await page.getByLabel('Name').fill('x');
      await page.getByLabel('Daily cap ($)').first().fill('abc');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByText('Enter an amount in dollars').first().waitFor();
      await expectAccessible(page, `keys refused (${size})`);
    } finally {
      await b.close();
    }
  }, 120_000);
});
