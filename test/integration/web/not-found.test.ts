/**
 * Unknown URLs (issue 24.4): a browser gets a 404 page in the layout, API clients keep problem+json, and a trailing
 * slash redirects to the page without it (never off-site).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';

let h: ControlHarness;
beforeAll(async () => {
  h = await startControl();
});
afterAll(async () => {
  await h?.stop();
});

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const get = (path: string, accept = BROWSER) =>
  fetch(h.control.url + path, { redirect: 'manual', headers: { accept } });

describe('unknown URLs', () => {
  it('answer a browser with an HTML 404 in the layout, with the strict page headers', async () => {
    const res = await get('/no-such-page');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain('<h1>Page not found</h1>');
    expect(html).toContain('<header class="site">');
    expect(html).toContain('action="/catalog"');
    expect(html).toContain('<code>not_found</code>');
  });

  it('answer API clients and /v1 paths with problem+json', async () => {
    const curl = await get('/no-such-page', '*/*');
    expect(curl.status).toBe(404);
    expect(curl.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const api = await get('/v1/no-such-route');
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await api.json()) as { code: string }).code).toBe('not_found');
  });

  it.each([
    ['/catalog/', '/catalog'],
    ['/dashboard/', '/dashboard'],
    ['/catalog/?q=weather', '/catalog?q=weather'],
    ['/leaderboards//', '/leaderboards'],
  ])('%s redirects to %s', async (from, to) => {
    const res = await get(from);
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe(to);
  });

  it('/apis and /apis/ lead to the catalog', async () => {
    const res = await get('/apis/');
    expect(res.headers.get('location')).toBe('/apis');
    const list = await get('/apis');
    expect(list.status).toBe(308);
    expect(list.headers.get('location')).toBe('/catalog');
  });

  it('never redirects to a protocol-relative address', async () => {
    for (const path of ['//evil.example/', '/%2F/evil.example/']) {
      const res = await get(path);
      const loc = res.headers.get('location');
      if (loc !== null) expect(loc.startsWith('//')).toBe(false);
    }
  });
});
