import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedKey, seedOrg } from '../../helpers/db.js';

let h: ControlHarness;
beforeAll(async () => {
  h = await startControl();
});
afterAll(() => h.stop());

/** An org with an owner session and a capped agent key that holds `keys:write` (the attack setup). */
async function cappedAgent(caps: { budgetCents?: number; perCallMaxCents?: number; dailyCapCents?: number } = {}) {
  const db = openTestDb(h.dataDir);
  const org = await seedOrg(db);
  const agent = await seedKey(db, org.orgId, {
    scopes: ['catalog:read', 'proxy:call', 'keys:write'],
    budgetCents: 100,
    ...caps,
  });
  await db.close();
  return { org, agent };
}

async function keyRow(id: string) {
  const db = openTestDb(h.dataDir);
  const row = await db.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  await db.close();
  return row;
}

describe('a capped key cannot raise its own power', () => {
  it('refuses PATCH of its own budget to null with cap_escalation, and the cap stays', async () => {
    const { agent } = await cappedAgent();
    const res = await call(h.control.url, 'PATCH', `/v1/keys/${agent.keyId}`, {
      token: agent.key,
      body: { budget_cents: null },
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('cap_escalation');
    expect(res.body.field).toBe('budget_cents');
    expect((await keyRow(agent.keyId)).budget_cents).toBe(100);
  });

  it('refuses a higher budget and free_only -> auto, but allows lowering and renaming', async () => {
    const { agent } = await cappedAgent({ perCallMaxCents: 5 });
    const higher = await call(h.control.url, 'PATCH', `/v1/keys/${agent.keyId}`, {
      token: agent.key,
      body: { per_call_max_cents: 6 },
    });
    expect(higher.body.code).toBe('cap_escalation');
    const lower = await call(h.control.url, 'PATCH', `/v1/keys/${agent.keyId}`, {
      token: agent.key,
      body: { budget_cents: 40, name: 'smaller', approval_mode: 'free_only' },
    });
    expect(lower.status).toBe(200);
    expect(lower.body).toMatchObject({ budget_cents: 40, name: 'smaller', approval_mode: 'free_only' });
    const back = await call(h.control.url, 'PATCH', `/v1/keys/${agent.keyId}`, {
      token: agent.key,
      body: { approval_mode: 'auto' },
    });
    expect(back.status).toBe(403);
    expect(back.body.code).toBe('cap_escalation');
    expect((await keyRow(agent.keyId)).approval_mode).toBe('free_only');
  });

  it('refuses to create an uncapped key or one with scopes it lacks; nothing is written', async () => {
    const { agent, org } = await cappedAgent();
    const uncapped = await call(h.control.url, 'POST', '/v1/keys', {
      token: agent.key,
      body: { name: 'escape', budget_cents: null },
    });
    expect(uncapped.status).toBe(403);
    expect(uncapped.body.code).toBe('cap_escalation');
    const omitted = await call(h.control.url, 'POST', '/v1/keys', { token: agent.key, body: { name: 'escape2' } });
    expect(omitted.body.code).toBe('cap_escalation');
    const bigger = await call(h.control.url, 'POST', '/v1/keys', {
      token: agent.key,
      body: { name: 'escape3', budget_cents: 101 },
    });
    expect(bigger.body.code).toBe('cap_escalation');
    const scoped = await call(h.control.url, 'POST', '/v1/keys', {
      token: agent.key,
      body: { name: 'escape4', scopes: ['billing:write'], budget_cents: 10 },
    });
    expect(scoped.body.code).toBe('insufficient_scope');
    const db = openTestDb(h.dataDir);
    const keys = await db.db.selectFrom('api_keys').select('id').where('org_id', '=', org.orgId).execute();
    await db.close();
    expect(keys).toHaveLength(2);
  });

  it("carves a child's budget out of its own, so the two together never exceed the original cap", async () => {
    const { agent } = await cappedAgent({ perCallMaxCents: 7 });
    const child = await call(h.control.url, 'POST', '/v1/keys', {
      token: agent.key,
      body: { name: 'sub-agent', budget_cents: 30 },
    });
    expect(child.status).toBe(201);
    expect(child.body.key).toMatchObject({
      budget_cents: 30,
      per_call_max_cents: 7,
      scopes: ['catalog:read', 'proxy:call'],
    });
    expect((await keyRow(agent.keyId)).budget_cents).toBe(70);
    // The parent may lower or revoke its child, but not raise it.
    const raise = await call(h.control.url, 'PATCH', `/v1/keys/${child.body.key.id}`, {
      token: agent.key,
      body: { budget_cents: 60 },
    });
    expect(raise.body.code).toBe('cap_escalation');
    const revoke = await call(h.control.url, 'DELETE', `/v1/keys/${child.body.key.id}`, { token: agent.key });
    expect(revoke.status).toBe(200);
  });

  it("may not touch the org's other keys", async () => {
    const { agent, org } = await cappedAgent();
    const res = await call(h.control.url, 'DELETE', `/v1/keys/${org.keyId}`, { token: agent.key });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
    expect((await keyRow(org.keyId)).revoked_at).toBeNull();
  });

  it('a session (or an uncapped key) raises caps', async () => {
    const { agent, org } = await cappedAgent();
    const bySession = await call(h.control.url, 'PATCH', `/v1/keys/${agent.keyId}`, {
      token: org.session,
      body: { budget_cents: null },
    });
    expect(bySession.status).toBe(200);
    expect(bySession.body.budget_cents).toBeNull();
    const byKey = await call(h.control.url, 'PATCH', `/v1/keys/${agent.keyId}`, {
      token: org.key,
      body: { budget_cents: 500 },
    });
    expect(byKey.body.budget_cents).toBe(500);
  });
});

describe('default scopes', () => {
  it('a key created without scopes does not inherit keys:write', async () => {
    const reg = (await call(h.control.url, 'POST', '/v1/register')).body;
    const res = await call(h.control.url, 'POST', '/v1/keys', { token: reg.api_key, body: { name: 'agent' } });
    expect(res.status).toBe(201);
    expect(res.body.key.scopes).toEqual(['catalog:read', 'proxy:call', 'usage:read']);
  });
});
