/**
 * The provider area's forms (issues 24.4, 22.2): import, listing details (name, summary, description, category,
 * base URL), prices, secret, terms documents and the public profile. Each parses with its core schema; a refusal
 * comes back to the same form with a human message beside the field, the input kept, and nothing changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfOf, type WebClient } from '../../helpers/web-client.js';
import { smallOpenApi } from '../../helpers/catalog.js';
import { startWebFixture, type WebFixture } from './web-fixture.js';

let f: WebFixture;
let web: WebClient;
let apiId: string;
beforeAll(async () => {
  f = await startWebFixture();
  web = await f.signIn('provider-forms@example.com');
});
afterAll(async () => {
  await f?.stop();
});

/** Posts the import form as a browser does (multipart), with an optional uploaded file. */
async function importForm(fields: Record<string, string>, file?: { name: string; text: string }) {
  const page = await web.get('/provider');
  const form = new FormData();
  for (const [k, v] of Object.entries({ ...fields, csrf_token: csrfOf(page.html) })) form.set(k, v);
  if (file) form.set('file', new Blob([file.text], { type: 'application/json' }), file.name);
  const cookie = [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(`${f.h.control.url}/provider/apis`, {
    method: 'POST',
    body: form,
    redirect: 'manual',
    headers: { cookie },
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
}

async function submitOn(page: string, action: string, form: Record<string, string>) {
  return web.submit(page, action, form);
}

describe('import', () => {
  it('an empty import asks for a URL beside the URL field (not "not both")', async () => {
    const res = await importForm({ openapi_url: '' });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(/id="import-openapi_url-error">Enter the URL of your OpenAPI document/);
    expect(res.html).not.toContain('not both');
  });

  it('an uploaded document becomes a draft listing', async () => {
    const res = await importForm(
      { openapi_url: '' },
      { name: 'api.json', text: JSON.stringify(smallOpenApi('Forms Api')) },
    );
    expect(res.status).toBe(303);
    apiId = /\/provider\/apis\/([^/?#]+)$/.exec(res.location ?? '')?.[1] ?? '';
    expect(apiId).not.toBe('');
  });
});

describe('listing details', () => {
  it('saves name, summary, description, category and base URL', async () => {
    const page = `/provider/apis/${apiId}`;
    const res = await submitOn(page, `${page}/details`, {
      name: 'Forms Weather',
      summary: 'Forecasts for any city',
      description: '# Weather\n\nDaily forecasts.',
      category: 'Weather',
      base_url: 'https://api.example.com/v2/',
    });
    expect(res.status).toBe(303);
    const row = await f.db.db
      .selectFrom('apis')
      .select(['name', 'summary', 'description', 'category', 'base_url'])
      .where('id', '=', apiId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      name: 'Forms Weather',
      summary: 'Forecasts for any city',
      description: '# Weather\n\nDaily forecasts.',
      base_url: 'https://api.example.com/v2',
    });
    expect(row.category.toLowerCase()).toBe('weather');
  });

  it('a bad base URL and a too-long summary come back beside their fields with the input kept', async () => {
    const page = `/provider/apis/${apiId}`;
    const res = await submitOn(page, `${page}/details`, {
      name: 'Should Not Save',
      summary: 'x'.repeat(300),
      base_url: 'not a url',
    });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(/id="details-summary-error">Summary can be at most 280 characters\./);
    expect(res.html).toMatch(/id="details-base_url-error">Upstream base URL: /);
    expect(res.html).toMatch(/name="base_url"[^>]*value="not a url"/);
    expect(res.html).toMatch(/name="name"[^>]*value="Should Not Save"/);
    const row = await f.db.db.selectFrom('apis').select('name').where('id', '=', apiId).executeTakeFirstOrThrow();
    expect(row.name).toBe('Forms Weather');
  });
});

describe('prices, secret and terms documents', () => {
  it('a bad price names the endpoint, never its id', async () => {
    const page = `/provider/apis/${apiId}`;
    const ep = await f.db.db
      .selectFrom('endpoints')
      .select(['id', 'price_cents'])
      .where('api_id', '=', apiId)
      .where('path', '=', '/ping')
      .executeTakeFirstOrThrow();
    const res = await submitOn(page, `${page}/pricing`, { [`price:${ep.id}`]: 'two dollars' });
    expect(res.status).toBe(400);
    expect(res.html).toContain('Price of GET /ping: enter dollars, like 0.02.');
    expect(res.html).toMatch(/value="two dollars"/);
    const errorText = /class="field-error"[^>]*>([^<]*)</.exec(res.html)?.[1] ?? '';
    expect(errorText).not.toContain(ep.id);
  });

  it('a secret over the schema limit is refused beside the field and never echoed', async () => {
    const page = `/provider/apis/${apiId}`;
    const secret = `s3cr3t-${'x'.repeat(4100)}`;
    const res = await submitOn(page, `${page}/credentials`, { secret });
    expect(res.status).toBe(400);
    expect(res.html).toContain('Secret can be at most 4,096 characters.');
    expect(res.html).not.toContain('s3cr3t-');
  });

  it('a terms version that is not x.y.z is refused beside the field; the markdown is kept', async () => {
    const page = `/provider/apis/${apiId}`;
    const res = await submitOn(page, `${page}/documents`, {
      version: '1.0',
      markdown: 'Be nice.',
      acceptance_mode: 'optional',
    });
    expect(res.status).toBe(400);
    expect(res.html).toContain('Version: three dotted numbers, like 1.0.0.');
    expect(res.html).toContain('>Be nice.</textarea>');
    expect(res.html).toMatch(/<option value="optional" selected/);
    const ok = await submitOn(page, `${page}/documents`, {
      version: '1.0.0',
      markdown: 'Be nice.',
      acceptance_mode: 'required',
    });
    expect(ok.status).toBe(303);
  });
});

describe('the public profile', () => {
  it('is edited on its page; a link with embedded credentials is refused beside the field', async () => {
    const first = await web.get('/provider/profile');
    expect(first.status).toBe(200);
    const bad = await submitOn('/provider/profile', '/provider/profile', {
      display_name: 'Acme Weather',
      slug: 'acme-weather',
      bio: 'We forecast.',
      website: 'https://trusted.example@evil.example/',
      logo_url: '',
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toMatch(/id="profile-website-error">Website: /);
    expect(bad.html).toMatch(/name="display_name"[^>]*value="Acme Weather"/);
    expect(await f.db.db.selectFrom('providers').select('display_name').execute()).toEqual([]);
    const ok = await submitOn('/provider/profile', '/provider/profile', {
      display_name: 'Acme Weather',
      slug: 'acme-weather',
      bio: 'We forecast.',
      website: 'https://acme.example/',
      logo_url: '',
    });
    expect(ok.status).toBe(303);
    const row = await f.db.db
      .selectFrom('providers')
      .select(['display_name', 'slug', 'bio', 'website'])
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      display_name: 'Acme Weather',
      slug: 'acme-weather',
      bio: 'We forecast.',
      website: 'https://acme.example/',
    });
    const pub = await web.get('/providers/acme-weather');
    expect(pub.html).toContain('Acme Weather');
  });
});
