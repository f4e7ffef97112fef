/**
 * Issue 25: the home page answers what svc is and what to do (search, live numbers, listings, categories, three ways
 * in); the dashboard's getting-started checklist ticks from real state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfOf } from '../../helpers/web-client.js';
import { seedListing, seedOrg } from '../../helpers/db.js';
import { startWebFixture, type WebFixture } from './web-fixture.js';

let f: WebFixture;
beforeAll(async () => {
  f = await startWebFixture();
  const provider = await seedOrg(f.db);
  await seedListing(f.db, {
    orgId: provider.orgId,
    slug: 'home-weather',
    baseUrl: 'http://127.0.0.1:9',
    endpoints: [{ method: 'GET', path: '/today', priceCents: 2 }],
    injection: 'none',
  });
});
afterAll(async () => {
  await f?.stop();
});

describe('the home page', () => {
  it('has a search box, live numbers, listings with initials and category marks, and three ways in', async () => {
    const web = await f.signIn('home@example.com');
    let html = '';
    // The catalog index picks the seeded listing up from its change log.
    for (let i = 0; i < 40 && !html.includes('/apis/home-weather'); i++) {
      html = (await web.get('/')).html;
      if (!html.includes('/apis/home-weather')) await new Promise((r) => setTimeout(r, 100));
    }
    expect(html).toMatch(/<form class="hero-search" method="get" action="\/catalog" role="search">/);
    expect(html).toContain('name="q"');
    expect(html).toMatch(/<strong>\d+<\/strong> live APIs/);
    expect(html).toContain('href="/apis/home-weather"');
    expect(html).toMatch(/class="avatar hue-\d+" aria-hidden="true">[A-Z?]{1,2}</);
    expect(html).toMatch(/class="cat hue-\d+" href="\/catalog\?category=/);
    expect(html).toContain('Three ways in');
    expect(html).toContain('svc connect');
    expect(html).toContain('mcpServers');
    expect(html).toContain('href="/provider"');
    const search = await web.get('/catalog?q=home-weather');
    expect(search.html).toContain('href="/apis/home-weather"');
  });
});

describe('the dashboard checklist', () => {
  it('ticks "create an agent key with caps" once such a key exists, and shows no calls yet', async () => {
    const web = await f.signIn('checklist@example.com');
    const before = await web.get('/dashboard');
    expect(before.html).toMatch(/<li class="todo" data-step="capped_key">/);
    expect(before.html).toMatch(/<li class="todo" data-step="first_call">/);
    expect(before.html).toContain('No calls yet.');
    const keys = await web.get('/dashboard/keys');
    await web.post('/dashboard/keys', {
      name: 'uncapped',
      approval_mode: 'auto',
      csrf_token: csrfOf(keys.html),
    });
    expect((await web.get('/dashboard')).html).toMatch(/<li class="todo" data-step="capped_key">/);
    await web.post('/dashboard/keys', {
      name: 'capped',
      daily_cap: '2',
      approval_mode: 'auto',
      csrf_token: csrfOf(keys.html),
    });
    const after = await web.get('/dashboard');
    expect(after.html).toMatch(/<li class="done" data-step="capped_key">/);
    expect(after.html).toMatch(/\d of 5 done/);
  });
});
