import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedOrg, seedKey } from '../../helpers/db.js';
import { runAuthSuite } from '../../helpers/auth-suite.js';

let h: ControlHarness;
beforeAll(async () => {
  h = await startControl();
});
afterAll(() => h.stop());

async function registered() {
  return (await call(h.control.url, 'POST', '/v1/register')).body as {
    api_key: string;
    key_id: string;
    org_id: string;
  };
}

describe('keys', () => {
  it('creates a key with a subset of scopes and caps; plaintext once, never listed', async () => {
    const reg = await registered();
    const res = await call(h.control.url, 'POST', '/v1/keys', {
      token: reg.api_key,
      body: {
        name: 'agent-1',
        scopes: ['proxy:call'],
        budget_cents: 500,
        per_call_max_cents: 5,
        daily_cap_cents: 100,
        approval_mode: 'free_only',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.api_key).toMatch(/^svc_live_/);
    expect(res.body.key).toMatchObject({
      name: 'agent-1',
      scopes: ['proxy:call'],
      budget_cents: 500,
      per_call_max_cents: 5,
      daily_cap_cents: 100,
      approval_mode: 'free_only',
      revoked_at: null,
    });
    const list = await call(h.control.url, 'GET', '/v1/keys', { token: reg.api_key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((k: { id: string }) => k.id)).toEqual(
      expect.arrayContaining([reg.key_id, res.body.key.id]),
    );
    expect(JSON.stringify(list.body)).not.toContain(res.body.api_key);
    expect(JSON.stringify(list.body)).not.toMatch(/key_hash/);
  });

  it('refuses to grant scopes the creator lacks, and writes nothing', async () => {
    const reg = await registered();
    const before = (await call(h.control.url, 'GET', '/v1/keys', { token: reg.api_key })).body.data.length;
    const res = await call(h.control.url, 'POST', '/v1/keys', {
      token: reg.api_key,
      body: { name: 'x', scopes: ['billing:write'] },
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('insufficient_scope');
    expect((await call(h.control.url, 'GET', '/v1/keys', { token: reg.api_key })).body.data.length).toBe(before);
  });

  it('patches caps and approval mode, and clears a cap with null', async () => {
    const reg = await registered();
    const created = (
      await call(h.control.url, 'POST', '/v1/keys', { token: reg.api_key, body: { name: 'k', daily_cap_cents: 10 } })
    ).body.key;
    const res = await call(h.control.url, 'PATCH', `/v1/keys/${created.id}`, {
      token: reg.api_key,
      body: { daily_cap_cents: null, budget_cents: 42, approval_mode: 'free_only', name: 'renamed' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: created.id,
      name: 'renamed',
      daily_cap_cents: null,
      budget_cents: 42,
      approval_mode: 'free_only',
    });
    const bad = await call(h.control.url, 'PATCH', `/v1/keys/${created.id}`, {
      token: reg.api_key,
      body: { budget_cents: -1 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    expect(bad.body.errors[0].path).toBe('budget_cents');
  });

  it('revokes a key; the revoked key is refused; revoking again is harmless', async () => {
    const reg = await registered();
    const created = await call(h.control.url, 'POST', '/v1/keys', { token: reg.api_key, body: { name: 'doomed' } });
    const del = await call(h.control.url, 'DELETE', `/v1/keys/${created.body.key.id}`, { token: reg.api_key });
    expect(del.status).toBe(200);
    expect(del.body.revoked_at).not.toBeNull();
    const refused = await call(h.control.url, 'GET', '/v1/me', { token: created.body.api_key });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('key_revoked');
    expect(
      (await call(h.control.url, 'DELETE', `/v1/keys/${created.body.key.id}`, { token: reg.api_key })).status,
    ).toBe(200);
    const db = openTestDb(h.dataDir);
    const change = await db.db
      .selectFrom('changes')
      .selectAll()
      .where('entity', '=', 'key')
      .where('entity_id', '=', created.body.key.id)
      .execute();
    await db.close();
    expect(change.length).toBeGreaterThanOrEqual(1);
  });

  it("cannot touch another org's keys", async () => {
    const a = await registered();
    const b = await registered();
    const res = await call(h.control.url, 'DELETE', `/v1/keys/${b.key_id}`, { token: a.api_key });
    expect(res.status).toBe(404);
    expect((await call(h.control.url, 'GET', '/v1/me', { token: b.api_key })).status).toBe(200);
  });

  it('accepts a session token (full scopes) for key management', async () => {
    const db = openTestDb(h.dataDir);
    const org = await seedOrg(db);
    await db.close();
    const res = await call(h.control.url, 'POST', '/v1/keys', {
      token: org.session,
      body: { name: 'from-dashboard', scopes: ['billing:write', 'proxy:call'] },
    });
    expect(res.status).toBe(201);
    expect(res.body.key.scopes).toEqual(['proxy:call', 'billing:write']);
  });
});

runAuthSuite('keys routes', () => h, [
  { method: 'GET', path: '/v1/keys', scope: 'keys:write' },
  { method: 'POST', path: '/v1/keys', scope: 'keys:write', body: { name: 'x' } },
  { method: 'DELETE', path: '/v1/keys/key_nonexistent', scope: 'keys:write' },
]);

describe('auth edge cases', () => {
  it('rejects a malformed bearer credential with 401', async () => {
    const res = await call(h.control.url, 'GET', '/v1/me', { token: 'not-a-key' });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
  });

  it('refuses a key of a suspended org', async () => {
    const db = openTestDb(h.dataDir);
    const org = await seedOrg(db);
    const { key } = await seedKey(db, org.orgId, { scopes: ['catalog:read'] });
    await db.db.updateTable('orgs').set({ status: 'suspended' }).where('id', '=', org.orgId).execute();
    await db.close();
    const res = await call(h.control.url, 'GET', '/v1/me', { token: key });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('org_suspended');
  });
});
