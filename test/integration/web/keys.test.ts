/**
 * The keys page (issue 24.4): a reload after creating a key creates no second key and shows the plaintext once;
 * a refused form comes back with the message beside the field in human words and the input kept; revoking asks
 * first; key cards show when a key was created and last used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfOf, type WebClient } from '../../helpers/web-client.js';
import { startWebFixture, type WebFixture } from './web-fixture.js';

let f: WebFixture;
beforeAll(async () => {
  f = await startWebFixture();
});
afterAll(async () => {
  await f?.stop();
});

async function keyRows(orgOf: string) {
  return f.db.db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.org_id', 'api_keys.org_id')
    .select(['api_keys.id', 'api_keys.name', 'api_keys.revoked_at', 'api_keys.daily_cap_cents'])
    .where('users.email', '=', orgOf)
    .execute();
}

async function create(web: WebClient, form: Record<string, string>) {
  return web.submit('/dashboard/keys', '/dashboard/keys', { approval_mode: 'auto', ...form });
}

describe('creating a key', () => {
  it('answers 303 and shows the plaintext on the next view only; a reload creates nothing', async () => {
    const web = await f.signIn('keys-once@example.com');
    const before = (await keyRows('keys-once@example.com')).length;
    const res = await create(web, { name: 'my-agent', daily_cap: '1.00' });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/keys#new-key');
    expect(res.html).not.toMatch(/svc_live_/);
    const shown = await web.get('/dashboard/keys');
    const key = /data-testid="new-key">\s*(svc_live_[A-Za-z0-9_]+)/.exec(shown.html)?.[1];
    expect(key).toBeDefined();
    expect(shown.html).toContain('daily cap $1.00');
    const again = await web.get('/dashboard/keys');
    expect(again.html).not.toContain(key);
    expect(again.html).not.toContain('data-testid="new-key"');
    const rows = await keyRows('keys-once@example.com');
    expect(rows.length).toBe(before + 1);
    expect(rows.find((r) => r.name === 'my-agent')?.daily_cap_cents).toBe(100);
  });

  it('a refused form comes back with the message beside the field, in human words, input kept, nothing created', async () => {
    const web = await f.signIn('keys-refused@example.com');
    const before = await keyRows('keys-refused@example.com');
    const big = await create(web, { name: 'big-one', daily_cap: '2000000', budget: '5.5x' });
    expect(big.status).toBe(400);
    expect(big.html).toContain('Daily cap can be at most $1000000.00.');
    expect(big.html).toContain('Enter an amount in dollars, like 5 or 5.25.');
    expect(big.html).not.toMatch(/daily_cap_cents|budget_cents/);
    expect(big.html).toMatch(/name="name"[^>]*value="big-one"/);
    expect(big.html).toMatch(/name="daily_cap"[^>]*value="2000000"/);
    expect(big.html).toMatch(/name="daily_cap"[^>]*aria-invalid="true"/);
    const mode = await create(web, { name: 'x', approval_mode: 'yolo' });
    expect(mode.status).toBe(400);
    expect(mode.html).toContain('Choose a valid approval mode.');
    const noName = await create(web, { name: '  ' });
    expect(noName.status).toBe(400);
    expect(noName.html).toContain('Name is required.');
    expect(await keyRows('keys-refused@example.com')).toEqual(before);
  });

  it('changing caps with a bad value keeps that key’s form open with the error and changes nothing', async () => {
    const web = await f.signIn('keys-patch@example.com');
    await create(web, { name: 'patchme', daily_cap: '3' });
    const id = (await keyRows('keys-patch@example.com')).find((r) => r.name === 'patchme')!.id;
    const page = await web.get('/dashboard/keys');
    const res = await web.post(`/dashboard/keys/${id}`, {
      daily_cap: '2000000',
      approval_mode: 'auto',
      csrf_token: csrfOf(page.html),
    });
    expect(res.status).toBe(400);
    expect(res.html).toContain('Daily cap can be at most $1000000.00.');
    expect(res.html).toMatch(/<details open="">/);
    expect((await keyRows('keys-patch@example.com')).find((r) => r.id === id)?.daily_cap_cents).toBe(300);
  });
});

describe('key cards and revoking', () => {
  it('cards show created and last-used; revoking asks first and the confirmation revokes', async () => {
    const web = await f.signIn('keys-revoke@example.com');
    await create(web, { name: 'doomed' });
    const list = await web.get('/dashboard/keys');
    expect(list.html).toMatch(/Created \d{4}-\d\d-\d\d \d\d:\d\d UTC · last used never/);
    const id = (await keyRows('keys-revoke@example.com')).find((r) => r.name === 'doomed')!.id;
    expect(list.html).toContain(`href="/dashboard/keys/${id}/revoke"`);
    const confirm = await web.get(`/dashboard/keys/${id}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('Revoke doomed?');
    expect(confirm.html).toContain('stops working at once');
    expect((await keyRows('keys-revoke@example.com')).find((r) => r.id === id)?.revoked_at).toBeNull();
    const done = await web.post(`/dashboard/keys/${id}/revoke`, { csrf_token: csrfOf(confirm.html) });
    expect(done.status).toBe(303);
    expect((await keyRows('keys-revoke@example.com')).find((r) => r.id === id)?.revoked_at).not.toBeNull();
  });
});
