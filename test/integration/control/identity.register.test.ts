import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb } from '../../helpers/db.js';
import { sha256Hex } from '../../../core/crypto.js';

let h: ControlHarness;
beforeAll(async () => {
  h = await startControl({ SVC_REGISTER_RATE_PER_MIN: '4' });
});
afterAll(() => h.stop());

describe('POST /v1/register', () => {
  it('creates an org and a consumer-scoped key shown once, with 0 credits', async () => {
    const res = await call(h.control.url, 'POST', '/v1/register');
    expect(res.status).toBe(201);
    expect(res.body.api_key).toMatch(/^svc_live_[0-9A-Za-z]{24}$/);
    expect(res.headers.get('x-svc-key')).toBe(res.body.api_key);
    expect(res.body.credit_cents).toBe(0);
    expect(res.body.org_id).toMatch(/^org_/);
    expect(res.body.scopes).toEqual(['catalog:read', 'proxy:call', 'keys:write', 'usage:read']);

    const me = await call(h.control.url, 'GET', '/v1/me', { token: res.body.api_key });
    expect(me.status).toBe(200);
    expect(me.body.org.id).toBe(res.body.org_id);
    expect(me.body.credential).toMatchObject({ type: 'api_key', key_id: res.body.key_id });
    expect(me.body.credential.scopes).toEqual(['catalog:read', 'proxy:call', 'keys:write', 'usage:read']);
    expect(me.body.balance.credit_cents).toBe(0);
  });

  it('stores only the SHA-256 of the key', async () => {
    const res = await call(h.control.url, 'POST', '/v1/register');
    const db = openTestDb(h.dataDir);
    const row = await db.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', res.body.key_id)
      .executeTakeFirstOrThrow();
    await db.close();
    expect(row.key_hash).toBe(sha256Hex(res.body.api_key));
    expect(Object.values(row)).not.toContain(res.body.api_key);
    expect(row.start).toBe(res.body.api_key.slice(0, 13));
  });

  it('is rate limited per client address with Retry-After', async () => {
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 6; i++) {
      last = await call(h.control.url, 'POST', '/v1/register');
      statuses.push(last.status);
    }
    expect(statuses).toContain(429);
    const limited = await call(h.control.url, 'POST', '/v1/register');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('health and contract', () => {
  it('answers /healthz and serves an OpenAPI 3.1 document generated from the route schemas', async () => {
    expect((await call(h.control.url, 'GET', '/healthz')).body).toEqual({ ok: true, process: 'control' });
    const doc = await call(h.control.url, 'GET', '/v1/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/v1/register', '/v1/keys', '/v1/keys/{id}', '/v1/auth/login/verify', '/v1/me']),
    );
    expect(
      doc.body.paths['/v1/keys'].post.requestBody.content['application/json'].schema.properties.budget_cents,
    ).toBeDefined();
  });

  it('answers unknown routes with a problem body', async () => {
    const res = await call(h.control.url, 'GET', '/v1/nope');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({ status: 404, code: 'not_found', type: expect.stringContaining('not_found') });
    expect(res.body.request_id).toMatch(/^req_/);
  });
});
