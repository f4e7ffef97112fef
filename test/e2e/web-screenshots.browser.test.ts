/**
 * Renders the ten main pages (and the listing console's section) at 1280x800 and 390x844 in Debian's Chromium (playwright-core) into docs/screenshots/,
 * against a fresh control plane with the demo data and one signed-in person. Run after changing pages:
 *   npx tsc -p tsconfig.json && SVC_SCREENSHOTS=1 SVC_TEST_SKIP_BUILD=1 npx vitest run test/e2e/web-screenshots.browser.test.ts
 * and commit the images (docs/web.md shows them). Skipped unless SVC_SCREENSHOTS=1 (it writes into docs/).
 */
import { it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startControl } from '../helpers/harness.js';
import { loginCodeOf, startSmtpSink } from '../helpers/smtp-sink.js';
import { openBrowser } from '../helpers/browser.js';
import { ROOT } from '../helpers/processes.js';

const OUT = join(ROOT, 'docs', 'screenshots');
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
/** name -> path; the signed-in ones come after the sign-in. */
const PUBLIC = [
  ['home', '/'],
  ['catalog', '/catalog'],
  ['listing', '/apis/demo-weather'],
  ['leaderboards', '/leaderboards'],
  ['market', '/market'],
  ['providers', '/providers'],
  ['login', '/login'],
] as const;
const PRIVATE = [
  ['dashboard', '/dashboard'],
  ['keys', '/dashboard/keys'],
  ['provider', '/provider'],
] as const;

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const smtp = await startSmtpSink();
  const h = await startControl({ SVC_SMTP_URL: smtp.url, SVC_DEMO: 'true' });
  try {
    for (const [size, viewport] of Object.entries(SIZES)) {
      const b = await openBrowser({ viewport });
      try {
        const { page } = b;
        for (const [name, path] of PUBLIC) {
          await page.goto(h.control.url + path, { waitUntil: 'load' });
          await page.screenshot({ path: join(OUT, `${name}-${size}.png`) });
        }
        const email = `shots-${size}@example.com`;
        await page.goto(`${h.control.url}/login`);
        await page.getByLabel('Email').fill(email);
        await page.getByRole('button', { name: 'Send code' }).click();
        await page.getByLabel('Code from the email').fill(loginCodeOf(await smtp.waitFor(email)));
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL('**/dashboard');
        for (const [name, path] of PRIVATE) {
          await page.goto(h.control.url + path, { waitUntil: 'load' });
          await page.screenshot({ path: join(OUT, `${name}-${size}.png`) });
        }
        // The listing console (Try it), signed in, on a paid endpoint: its generated form before the free quote.
        await page.goto(`${h.control.url}/apis/demo-weather#try`, { waitUntil: 'load' });
        await page.getByLabel('Endpoint').selectOption({ label: 'GET /forecast ($0.02)' });
        await page.getByRole('button', { name: 'Show its form' }).click();
        await page.locator('#try').scrollIntoViewIfNeeded();
        await page.locator('#try').screenshot({ path: join(OUT, `console-${size}.png`) });
      } finally {
        await b.close();
      }
    }
    console.log(`wrote ${(PUBLIC.length + PRIVATE.length + 1) * 2} screenshots to ${OUT}`);
  } finally {
    await h.stop();
    await smtp.close();
  }
}

it.skipIf(process.env.SVC_SCREENSHOTS !== '1')('renders the ten main pages into docs/screenshots', main, 240_000);
