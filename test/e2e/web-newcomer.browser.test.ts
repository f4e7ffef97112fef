/**
 * The web face end to end in headless Chromium against real processes (control, gateway, stub upstream, SMTP
 * sink): a newcomer's whole path to a paid call, provider text that tries XSS, axe-core on every page visited,
 * first-load weight, and screenshots (desktop and 375 px) under test-artifacts/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../helpers/harness.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { loginCodeOf, startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import {
  createLiveListing,
  smallOpenApi,
  startStubUpstream,
  type LiveListing,
  type StubUpstream,
} from '../helpers/catalog.js';
import { openTestDb, seedOrg, type SeededOrg } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import {
  expectAccessible as expectPageAccessible,
  DESKTOP,
  firstLoadBytes,
  openBrowser,
  PHONE,
  screenshot,
  type BrowserSession,
} from '../helpers/browser.js';
import type { DbHandles } from '../../core/db/database.js';

const XSS = `<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>`;

let h: ControlHarness;
let gw: RunningGateway;
let smtp: SmtpSink;
let up: StubUpstream;
let db: DbHandles;
let provider: SeededOrg;
let listing: LiveListing;
let browser: BrowserSession;

beforeAll(async () => {
  smtp = await startSmtpSink();
  up = await startStubUpstream();
  h = await startControl({ SVC_SMTP_URL: smtp.url });
  gw = await startGateway(h.dataDir);
  db = openTestDb(h.dataDir);
  provider = await seedOrg(db);
  listing = await createLiveListing(h.control.url, provider.key, {
    baseUrl: up.url,
    name: `Paid ${XSS} API`,
    openapiBody: smallOpenApi('Paid API', {
      info: { title: 'Paid API', version: '1.0.0', description: `Says hi. ${XSS}` },
    }),
    prices: { 'GET /ping': 7 },
  });
  const doc = await call(h.control.url, 'POST', '/v1/provider/documents', {
    token: provider.key,
    body: {
      kind: 'terms',
      source: 'hosted',
      version: '1.0.0',
      markdown: `# Terms\n\nBe nice. ${XSS} [click](javascript:window.__xss=1)`,
      api_id: listing.apiId,
      acceptance_mode: 'required',
    },
  });
  expect(doc.status).toBe(201);
  await call(h.control.url, 'POST', `/v1/provider/documents/${doc.body.document_id}/activate`, {
    token: provider.key,
  });
  browser = await openBrowser({ viewport: DESKTOP });
});
afterAll(async () => {
  await browser?.close();
  await db?.close();
  await gw?.stop();
  await h?.stop();
  await up?.close();
  await smtp?.close();
});

const expectAccessible = (label: string) => expectPageAccessible(browser.page, label);

async function shots(name: string): Promise<void> {
  const { page } = browser;
  await screenshot(page, `${name}-desktop`);
  await page.setViewportSize(PHONE);
  await screenshot(page, `${name}-375`);
  const overflow = await page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth + 1');
  expect({ page: name, horizontalScroll: overflow }).toEqual({ page: name, horizontalScroll: false });
  await page.setViewportSize(DESKTOP);
}

async function paidCall(key: string) {
  for (let i = 0; ; i++) {
    const r = await call(gw.url, 'GET', `/${listing.slug}/ping`, { token: key });
    if (r.status === 200 || i >= 40) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe('a newcomer in the browser', () => {
  it('signs in with the mailed code, creates a capped key, buys test credits, accepts terms, calls, and sees it in usage and the CSV', async () => {
    const { page } = browser;
    const base = h.control.url;
    await page.goto(`${base}/`);
    await expectAccessible('home');
    await page.getByRole('link', { name: 'Sign in or create an account' }).click();
    await page.getByLabel('Email').fill('newcomer@example.com');
    await page.getByRole('button', { name: 'Send code' }).click();
    const code = loginCodeOf(await smtp.waitFor('newcomer@example.com'));
    await page.getByLabel('Code from the email').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
    await expectAccessible('dashboard');
    await shots('dashboard');

    // A key with a $1.00 daily cap; the plaintext is on this one response only.
    await page.goto(`${base}/dashboard/keys`);
    await page.getByLabel('Name').fill('my-agent');
    await page.getByLabel('Daily cap ($)').first().fill('1.00');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-key').textContent())!.trim();
    expect(key).toMatch(/^svc_live_/);
    expect(await page.getByText('daily cap $1.00').isVisible()).toBe(true);
    await expectAccessible('keys');
    await page.reload({ waitUntil: 'load' }).catch(() => undefined);
    await page.goto(`${base}/dashboard/keys`);
    expect(await page.content()).not.toContain(key);

    // Test-payments checkout: the page says no real money; the balance grows by the pack's credit.
    await page.goto(`${base}/dashboard/billing`);
    await expectAccessible('billing');
    const before = await page.getByTestId('balance').textContent();
    await page.getByRole('button', { name: 'Buy Starter' }).click();
    await page.waitForURL('**/billing/test/checkout/**');
    expect(await page.getByText('TEST MODE - no real money').isVisible()).toBe(true);
    await expectAccessible('test checkout');
    await page.getByLabel('Card number').fill('4242 4242 4242 4242');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByText('Payment succeeded').first().waitFor();
    await page.goto(`${base}/dashboard/billing`);
    expect(await page.getByTestId('balance').textContent()).not.toBe(before);
    expect(await page.getByTestId('balance').textContent()).toBe('$5.50');

    // Required terms: the gateway refuses (428) until an owner accepts them on the listing page.
    expect((await call(gw.url, 'GET', `/${listing.slug}/ping`, { token: key })).status).toBe(428);
    await page.goto(`${base}/apis/${listing.slug}`);
    await expectAccessible('listing');
    await shots('listing');
    await page.getByRole('button', { name: /^Accept version 1\.0\.0/ }).click();
    await page.waitForURL(`**/apis/${listing.slug}#terms`);
    expect(await page.getByText(/accepted by your org/).isVisible()).toBe(true);

    const paid = await paidCall(key);
    expect(paid.status).toBe(200);
    expect(paid.headers.get('x-svc-charged-cents')).toBe('7');

    await page.goto(`${base}/dashboard/usage`);
    expect(await page.getByTestId('total-calls').textContent()).toBe('1');
    expect(await page.getByTestId('total-charged').textContent()).toBe('$0.07');
    expect(await page.locator('figure.chart svg[role=img]').count()).toBeGreaterThanOrEqual(2);
    await expectAccessible('usage');
    await shots('usage');
    const csv = await page.request.get(`${base}/dashboard/usage.csv?days=30`);
    expect(csv.headers()['content-type']).toContain('text/csv');
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(listing.slug);
    expect(lines[1]).toContain(',200,');
  });

  it('shows the catalog with filters; provider text with HTML renders as text and runs nothing', async () => {
    const { page } = browser;
    await page.goto(`${h.control.url}/catalog?q=paid`);
    await expectAccessible('catalog');
    await shots('catalog');
    expect(await page.getByRole('link', { name: `Paid ${XSS} API` }).isVisible()).toBe(true);
    await page.goto(`${h.control.url}/apis/${listing.slug}`);
    await page.getByText('Read the terms').click();
    expect(await page.locator('img[src=x]').count()).toBe(0);
    expect(await page.locator('main script').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(await page.evaluate<unknown>('window.__xss')).toBeUndefined();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Paid ${XSS} API`);
    expect(await page.content()).toContain('&lt;script&gt;window.__xss=1&lt;/script&gt;');
  });

  it('serves the public market pages and the catalog request form, each passing axe-core', async () => {
    const { page } = browser;
    const base = h.control.url;
    const detail = await call(base, 'GET', `/v1/apis/${listing.slug}`);
    const providerPath = `/providers/${detail.body.provider.slug}`;
    for (const path of [
      '/leaderboards',
      '/leaderboards/most_used',
      '/market',
      '/activity',
      '/providers',
      providerPath,
    ]) {
      const res = await page.goto(base + path);
      expect({ path, status: res?.status() }).toEqual({ path, status: 200 });
      await expectAccessible(path);
    }
    await shots('market');
    await page.goto(`${base}/catalog/request`);
    await expectAccessible('/catalog/request');
    await page.getByLabel('What should it do?').fill('Tide tables for Lisbon');
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.getByText('your request is recorded').waitFor();
    const row = await db.db.selectFrom('catalog_requests').select('query').executeTakeFirst();
    expect(row?.query).toBe('Tide tables for Lisbon');
  });

  it('keeps every public and dashboard page under 100 KB on first load', async () => {
    for (const path of [
      '/',
      '/catalog',
      `/apis/${listing.slug}`,
      '/dashboard',
      '/dashboard/usage',
      '/dashboard/keys',
      '/dashboard/billing',
      '/provider',
      '/market',
      '/login',
    ])
      expect({ path, bytes: (await firstLoadBytes(browser, h.control.url + path)) < 100 * 1024 }).toEqual({
        path,
        bytes: true,
      });
  });
});
