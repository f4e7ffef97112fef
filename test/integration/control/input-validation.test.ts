import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb } from '../../helpers/db.js';

let h: ControlHarness;
beforeAll(async () => {
  h = await startControl();
});
afterAll(() => h.stop());

async function counts() {
  const db = openTestDb(h.dataDir);
  const [orgs, users, keys, ledger] = await Promise.all(
    (['orgs', 'users', 'api_keys', 'ledger_entries'] as const).map(
      async (t) => (await db.db.selectFrom(t).select('id').execute()).length,
    ),
  );
  await db.close();
  return { orgs, users, keys, ledger };
}

describe('bad input', () => {
  it('answers malformed JSON with invalid_json in the problem shape and writes nothing', async () => {
    const before = await counts();
    const res = await call(h.control.url, 'POST', '/v1/signup', { rawBody: '{"email": "a@b.c",' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({
      code: 'invalid_json',
      status: 400,
      title: expect.any(String),
      detail: expect.any(String),
      type: expect.stringContaining('invalid_json'),
    });
    expect(res.body.request_id).toBe(res.headers.get('x-svc-request-id'));
    expect(await counts()).toEqual(before);
  });

  it.each([
    ['/v1/signup', { email: 42 }, 'email'],
    ['/v1/signup', { email: 'not-an-email' }, 'email'],
    ['/v1/signup', { email: 'a@b.co', extra: true }, ''],
    ['/v1/auth/login/verify', { email: 'a@b.co', code: '12345' }, 'code'],
    ['/v1/auth/login/verify', { email: 'a@b.co', code: 123456 }, 'code'],
    ['/v1/auth/verify-email', {}, 'token'],
  ])('POST %s with %j is validation_failed naming %s, and writes nothing', async (path, body, field) => {
    const before = await counts();
    const res = await call(h.control.url, 'POST', path, { body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    expect(await counts()).toEqual(before);
  });

  it('refuses key creation with wrong types and creates no key', async () => {
    const reg = (await call(h.control.url, 'POST', '/v1/register')).body;
    const before = await counts();
    const res = await call(h.control.url, 'POST', '/v1/keys', {
      token: reg.api_key,
      body: { name: 'x', scopes: ['nope:write'], daily_cap_cents: 1.5 },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['daily_cap_cents', 'scopes.0']);
    expect(await counts()).toEqual(before);
  });
});

describe('media type and error shape', () => {
  it('a POST body without a JSON content type is 415 unsupported_media_type and writes nothing', async () => {
    const before = await counts();
    const res = await call(h.control.url, 'POST', '/v1/signup', {
      rawBody: 'email=a@b.co',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('unsupported_media_type');
    expect(res.body.request_id).toBe(res.headers.get('x-svc-request-id'));
    expect(await counts()).toEqual(before);
  });
});
