/** A provider's path in headless Chromium: import an OpenAPI document, price it, add and activate terms, publish. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../helpers/harness.js';
import { loginCodeOf, startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import {
  serveDocuments,
  smallOpenApi,
  startStubUpstream,
  type LocalServer,
  type StubUpstream,
} from '../helpers/catalog.js';
import {
  expectAccessible as expectPageAccessible,
  DESKTOP,
  openBrowser,
  PHONE,
  screenshot,
  type BrowserSession,
} from '../helpers/browser.js';
import { call } from '../helpers/http.js';

let h: ControlHarness;
let smtp: SmtpSink;
let docs: LocalServer;
let up: StubUpstream;
let browser: BrowserSession;

beforeAll(async () => {
  smtp = await startSmtpSink();
  up = await startStubUpstream();
  docs = await serveDocuments({
    '/openapi.json': { ...smallOpenApi('Weather Pro'), servers: [{ url: up.url }] },
  });
  h = await startControl({ SVC_SMTP_URL: smtp.url });
  browser = await openBrowser({ viewport: DESKTOP });
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
  await docs?.close();
  await up?.close();
  await smtp?.close();
});

const expectAccessible = (label: string) => expectPageAccessible(browser.page, label);

describe('a provider in the browser', () => {
  it('imports an OpenAPI document, prices it, creates and activates terms, and publishes', async () => {
    const { page } = browser;
    const base = h.control.url;
    await page.goto(`${base}/provider`);
    await page.getByLabel('Email').fill('provider@example.com');
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code from the email').fill(loginCodeOf(await smtp.waitFor('provider@example.com')));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/provider');
    await expectAccessible('provider area');

    await page.getByLabel('OpenAPI document URL').fill(`${docs.url}/openapi.json`);
    await page.getByRole('button', { name: 'Import as draft' }).click();
    await page.waitForURL('**/provider/apis/**');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Weather Pro');
    await expectAccessible('provider listing');

    await page.getByLabel('Price of GET /ping in dollars').fill('0.05');
    await page.getByRole('button', { name: 'Save prices' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByLabel('Price of GET /ping in dollars').inputValue()).toBe('0.05');

    await page.getByLabel('Version').fill('1.0.0');
    await page.getByLabel('Terms (markdown)').fill('# Weather Pro terms\n\nNo scraping.');
    await page.getByRole('button', { name: 'Create document' }).click();
    await page.getByRole('button', { name: 'Activate 1.0.0' }).click();
    await page.getByText('1.0.0 · required · activated').waitFor();

    await page.getByLabel('I accept the marketplace provider terms').check();
    await page.getByLabel('Skip the upstream check').check();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('link', { name: 'Public page' }).waitFor();
    await screenshot(page, 'provider-listing-desktop');
    await page.setViewportSize(PHONE);
    await screenshot(page, 'provider-listing-375');
    await page.goto(`${base}/provider`);
    await screenshot(page, 'provider-area-375');
    await page.setViewportSize(DESKTOP);
    await screenshot(page, 'provider-area-desktop');

    const search = await call(base, 'GET', '/v1/catalog/search?query=weather');
    const live = search.body.data.find((l: { name: string }) => l.name === 'Weather Pro');
    expect(live).toBeDefined();
    const detail = await call(base, 'GET', `/v1/apis/${live.slug}`);
    expect(detail.body.terms).toMatchObject({ version: '1.0.0', acceptance_mode: 'required' });
    expect(detail.body.min_price_cents).toBe(0);
    expect(detail.body.endpoints.find((e: { path: string }) => e.path === '/ping').price_cents).toBe(5);
  });
});
