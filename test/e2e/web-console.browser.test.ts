/**
 * "Try it" on a listing page (issue 25 item 2) in headless Chromium against real processes (control, gateway, stub
 * upstream): an anonymous visitor sees the form and a sign-in prompt; a signed-in person makes a free call and a
 * paid call (the free quote first), the balance drops by the price and the ledger has the charge; keyboard only
 * works; axe passes at both widths; and no response the browser ever received carries an API key (the org's console
 * key is read back from the database, decrypted with the data dir's server key, and searched for in every body and
 * header of the page's network log, with every other key of the run).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptSecret, sha256Hex } from '../../core/crypto.js';
import type { DbHandles } from '../../core/db/database.js';
import { DESKTOP, expectAccessible, openBrowser, PHONE, type BrowserSession } from '../helpers/browser.js';
import { createLiveListing, startStubUpstream, type LiveListing, type StubUpstream } from '../helpers/catalog.js';
import { grantCredits, openTestDb, seedOrg, type SeededOrg } from '../helpers/db.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startControl, type ControlHarness } from '../helpers/harness.js';
import { call } from '../helpers/http.js';

/** An API key anywhere in a text: the real format (core/key-format.ts). */
const KEY_RE = /svc_live_[0-9A-Za-z]{24}/;

const OPENAPI = {
  openapi: '3.0.3',
  info: { title: 'Weather for tests', version: '1.0.0' },
  paths: {
    '/weather': {
      get: {
        operationId: 'weather',
        summary: 'Current weather',
        parameters: [{ name: 'city', in: 'query', required: true, schema: { type: 'string', example: 'lisbon' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        summary: 'One item',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', example: 'item-7' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/items': {
      post: {
        operationId: 'createItem',
        summary: 'Create an item',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { name: { type: 'string', example: 'lamp' }, count: { type: 'integer', example: 3 } },
              },
            },
          },
        },
        responses: { '201': { description: 'created' } },
      },
    },
  },
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

let h: ControlHarness;
let gw: RunningGateway;
let up: StubUpstream;
let db: DbHandles;
let provider: SeededOrg;
let person: SeededOrg;
let listing: LiveListing;
let browser: BrowserSession;
/** Every response the browser received: url, headers and body text. */
const seen: { url: string; headers: string; body: string }[] = [];
const pending: Promise<void>[] = [];
/** Top-level navigations: with the console's script, a post swaps the section in place instead. */
const navigations: string[] = [];

function record(page: Page): void {
  page.on('response', (res: Response) => {
    pending.push(
      (async () => {
        const headers = JSON.stringify(await res.allHeaders());
        const body = await res.body().then(
          (b) => b.toString('utf8'),
          () => '',
        );
        seen.push({ url: res.url(), headers, body });
      })(),
    );
  });
}

beforeAll(async () => {
  up = await startStubUpstream();
  const port = await freePort();
  h = await startControl({ SVC_GATEWAY_URL: `http://127.0.0.1:${port}` });
  gw = await startGateway(h.dataDir, { SVC_GATEWAY_PORT: String(port) });
  db = openTestDb(h.dataDir);
  provider = await seedOrg(db);
  listing = await createLiveListing(h.control.url, provider.key, {
    baseUrl: up.url,
    name: 'Console Weather',
    openapiBody: OPENAPI,
    prices: { 'GET /weather': 2 },
  });
  person = await seedOrg(db, { email: 'console@example.com' });
  await grantCredits(db, person.orgId, 500);
  browser = await openBrowser({ viewport: DESKTOP });
  record(browser.page);
  browser.page.on('framenavigated', (f) => navigations.push(f.url()));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await db?.close();
  await gw?.stop();
  await h?.stop();
  await up?.close();
});

const listingUrl = (endpoint?: string) =>
  `${h.control.url}/apis/${listing.slug}${endpoint ? `?try=${listing.endpoints[endpoint]}` : ''}#try`;

async function accessibleAtBothWidths(page: Page, label: string): Promise<void> {
  await expectAccessible(page, `${label} (desktop)`);
  await page.setViewportSize(PHONE);
  await expectAccessible(page, `${label} (phone)`);
  await page.setViewportSize(DESKTOP);
}

async function signIn(): Promise<void> {
  await browser.context.addCookies([
    { name: 'svc_session', value: person.session, url: h.control.url, httpOnly: true, sameSite: 'Lax' },
  ]);
}

async function balanceCents(): Promise<number> {
  const r = await db.db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.sum<number>('amount_cents').as('s'))
    .where('org_id', '=', person.orgId)
    .where('status', '=', 'settled')
    .executeTakeFirst();
  return Number(r?.s ?? 0);
}

async function callCharges(): Promise<number[]> {
  const rows = await db.db
    .selectFrom('ledger_entries')
    .select('amount_cents')
    .where('org_id', '=', person.orgId)
    .where('kind', '=', 'call_charge')
    .execute();
  return rows.map((r) => r.amount_cents);
}

describe('the listing console', () => {
  it('shows an anonymous visitor the generated form and a sign-in prompt, with no send button', async () => {
    const { page } = browser;
    await page.goto(listingUrl('GET /weather'));
    const section = page.locator('#try');
    expect(await section.getByLabel(/^city/).inputValue()).toBe('lisbon');
    expect(await section.getByRole('link', { name: 'Sign in' }).getAttribute('href')).toContain('/login?next=');
    expect(await section.getByRole('button', { name: /Send|quote/ }).count()).toBe(0);
    await page.goto(listingUrl('POST /items'));
    expect(JSON.parse(await page.locator('#try-body').inputValue())).toEqual({ name: 'lamp', count: 3 });
    await accessibleAtBothWidths(page, 'console, anonymous');
  });

  it('makes a free call: status, headers, pretty JSON body; nothing charged', async () => {
    await signIn();
    const { page } = browser;
    await page.goto(listingUrl('GET /items/{id}'));
    await page.getByLabel(/^id/).fill('42');
    await page.getByRole('button', { name: 'Send (free)' }).click();
    await expect.poll(() => page.getByTestId('try-status').textContent()).toContain('Status 200');
    expect(await page.getByTestId('try-status').textContent()).toContain('charged $0.00');
    expect(await page.getByTestId('try-headers').textContent()).toContain('x-svc-request-id');
    const body = (await page.getByTestId('try-body').textContent())!;
    expect(JSON.parse(body)).toMatchObject({ ok: true, method: 'GET', path: '/items/42' });
    expect(body).toContain('\n  "ok": true'); // pretty-printed
    expect(up.requests.some((r) => r.url === '/items/42')).toBe(true);
    // The first use created the org's console key, capped as the form offered ($5.00), with only proxy:call.
    const key = await db.db
      .selectFrom('api_keys')
      .selectAll()
      .where('org_id', '=', person.orgId)
      .where('name', '=', 'Try-it console (web)')
      .executeTakeFirstOrThrow();
    expect({ scopes: key.scopes, cap: key.daily_cap_cents, revoked: key.revoked_at }).toEqual({
      scopes: 'proxy:call',
      cap: 500,
      revoked: null,
    });
    expect(await page.getByTestId('try-key').textContent()).toContain('daily cap of $5.00');
    await accessibleAtBothWidths(page, 'console, free call answered');
  });

  it('quotes a paid call first, then sends it: the balance drops by the price and the ledger has the charge', async () => {
    const { page } = browser;
    const before = await balanceCents();
    expect(before).toBe(500);
    await page.goto(listingUrl());
    await page.getByLabel('Endpoint').selectOption(listing.endpoints['GET /weather']!);
    await page.getByRole('button', { name: 'Show its form' }).click();
    expect(await page.getByRole('button', { name: /^Send/ }).count()).toBe(0); // no send before the quote
    await page.getByRole('button', { name: 'Get a free quote' }).click();
    await expect.poll(() => page.getByTestId('try-quote').textContent()).toBe('This call costs $0.02; you have $5.00.');
    expect(await callCharges()).toEqual([]); // the quote is free
    await accessibleAtBothWidths(page, 'console, quote');
    await page.getByRole('button', { name: 'Send for $0.02' }).click();
    await expect.poll(() => page.getByTestId('try-status').textContent()).toContain('Status 200');
    const status = (await page.getByTestId('try-status').textContent())!;
    expect(status).toContain('charged $0.02');
    expect(status).toContain('balance after $4.98');
    expect(JSON.parse((await page.getByTestId('try-body').textContent())!)).toMatchObject({
      path: '/weather?city=lisbon',
    });
    // Metered like any other call: the gateway's settle writes the charge (group commit, so poll briefly).
    await expect.poll(callCharges, { timeout: 10_000 }).toEqual([-2]);
    await expect.poll(balanceCents, { timeout: 10_000 }).toBe(498);
    await accessibleAtBothWidths(page, 'console, paid call answered');
  });

  it('works with the keyboard only: Tab to the field, type, Enter on the button', async () => {
    const { page } = browser;
    await page.goto(listingUrl('GET /items/{id}'));
    await page.reload(); // a goto that differs from the current URL only by its #fragment would not load the page
    const focusOn = async (label: string) => {
      for (let i = 0; i < 200; i++) {
        await page.keyboard.press('Tab');
        const name = await page.evaluate<string>(`(() => {
          const el = document.activeElement;
          if (!el) return '';
          const id = el.getAttribute('id');
          const label = id ? document.querySelector('label[for="' + id + '"]') : null;
          return ((label ? label.textContent : el.textContent) || '').trim();
        })()`);
        if (name.startsWith(label)) return;
      }
      throw new Error(`Tab never reached ${label}`);
    };
    await focusOn('id');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('kb-1');
    await focusOn('Send (free)');
    const navs = navigations.length;
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('try-body').textContent()).toContain('/items/kb-1');
    expect(JSON.parse((await page.getByTestId('try-body').textContent())!)).toMatchObject({ path: '/items/kb-1' });
    // Focus moved to the answer, so a keyboard or screen-reader user lands on it.
    expect(await page.evaluate<string>('document.activeElement && document.activeElement.id')).toBe('try-result');
    expect(navigations.length).toBe(navs); // the script swapped the section: no page load
  });

  it('refuses a missing required value in place, and nothing is called', async () => {
    const { page } = browser;
    const calls = up.requests.length;
    await page.goto(listingUrl('POST /items'));
    await page.locator('#try-body').fill('{not json');
    await page.getByRole('button', { name: 'Send (free)' }).click();
    await expect.poll(() => page.locator('#try-body-error').textContent()).toContain('Not valid JSON');
    expect(await page.locator('#try-body').getAttribute('aria-invalid')).toBe('true');
    expect(up.requests.length).toBe(calls);
  });

  it('works without JavaScript as plain form posts: quote, then send', async () => {
    const plain = await openBrowser({ viewport: DESKTOP, javaScriptEnabled: false });
    try {
      record(plain.page);
      await plain.context.addCookies([
        { name: 'svc_session', value: person.session, url: h.control.url, httpOnly: true, sameSite: 'Lax' },
      ]);
      const { page } = plain;
      await page.goto(listingUrl('GET /weather'));
      await page.getByLabel(/^city/).fill('porto');
      // A gateway holding a lease slice of this org's credit (reserved for in-flight calls) does not make the person's
      // balance look smaller: the quote shows what get_balance and the dashboard show.
      const reserve = (cents: number) =>
        db.db
          .updateTable('balances')
          .set((eb) => ({ reserved_cents: eb('reserved_cents', '+', cents) }))
          .where('org_id', '=', person.orgId)
          .execute();
      await reserve(123);
      try {
        await page.getByRole('button', { name: 'Get a free quote' }).click();
        await page.waitForURL('**/try#try');
      } finally {
        await reserve(-123);
      }
      expect(await page.getByTestId('try-quote').textContent()).toBe('This call costs $0.02; you have $4.98.');
      expect(await page.getByLabel(/^city/).inputValue()).toBe('porto'); // the typed value is kept
      await page.getByRole('button', { name: 'Send for $0.02' }).click();
      expect(await page.getByTestId('try-status').textContent()).toContain('balance after $4.96');
      expect(JSON.parse((await page.getByTestId('try-body').textContent())!)).toMatchObject({
        path: '/weather?city=porto',
      });
      await expect.poll(callCharges, { timeout: 10_000 }).toEqual([-2, -2]);
    } finally {
      await plain.close();
    }
  });

  it('says when required terms are not accepted yet and offers the accept step in place', async () => {
    const doc = await call(h.control.url, 'POST', '/v1/provider/documents', {
      token: provider.key,
      body: {
        kind: 'terms',
        source: 'hosted',
        version: '1.0.0',
        markdown: '# Terms\n\nBe nice.',
        api_id: listing.apiId,
        acceptance_mode: 'required',
      },
    });
    expect(doc.status).toBe(201);
    const act = await call(h.control.url, 'POST', `/v1/provider/documents/${doc.body.document_id}/activate`, {
      token: provider.key,
    });
    expect(act.status).toBe(200);
    await signIn();
    const { page } = browser;
    await page.goto(listingUrl('GET /items/{id}'));
    const notice = page.getByTestId('try-terms');
    expect(await notice.textContent()).toContain('terms (version 1.0.0) must be accepted');
    await accessibleAtBothWidths(page, 'console, terms pending');
    await notice.getByRole('button', { name: 'Accept these terms (version 1.0.0) and continue' }).click();
    await page.waitForURL(`**/apis/${listing.slug}#try`);
    expect(await page.getByTestId('try-terms').count()).toBe(0);
    const accepted = await db.db
      .selectFrom('terms_acceptances')
      .select('document_id')
      .where('org_id', '=', person.orgId)
      .execute();
    expect(accepted.map((a) => a.document_id)).toEqual([doc.body.document_id]);
  });

  it('never sends an API key to the browser', async () => {
    await Promise.all(pending);
    const link = await db.db
      .selectFrom('console_keys')
      .selectAll()
      .where('org_id', '=', person.orgId)
      .executeTakeFirstOrThrow();
    const secret = Buffer.from(readFileSync(join(h.dataDir, 'secret.key'), 'utf8').trim(), 'hex');
    const consoleKey = decryptSecret(secret, link.key_secret);
    const row = await db.db.selectFrom('api_keys').selectAll().where('id', '=', link.key_id).executeTakeFirstOrThrow();
    expect(sha256Hex(consoleKey)).toBe(row.key_hash); // stored encrypted, and it is the key the gateway knows
    expect(link.key_secret).not.toMatch(KEY_RE);
    expect(seen.length).toBeGreaterThan(10);
    const leaks = seen.filter(
      (r) =>
        KEY_RE.test(r.body) ||
        KEY_RE.test(r.headers) ||
        [consoleKey, person.key, provider.key].some((k) => r.body.includes(k) || r.headers.includes(k)),
    );
    expect(leaks.map((l) => l.url)).toEqual([]);
  });
});
