import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { smallOpenApi, startStubUpstream, type StubUpstream } from '../../helpers/catalog.js';
import type { DbHandles } from '../../../core/db/database.js';

let h: ControlHarness;
let db: DbHandles;
let up: StubUpstream;
let org: SeededOrg;
const SECRET = 'upstream-secret-123';

beforeAll(async () => {
  up = await startStubUpstream({ requireBearer: SECRET });
  h = await startControl();
  db = openTestDb(h.dataDir);
  org = await seedOrg(db);
});
afterAll(async () => {
  await db.close();
  await h.stop();
  await up.close();
});

async function draft(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const c = await call(h.control.url, 'POST', '/v1/provider/apis', {
    token: org.key,
    body: { body: smallOpenApi(name), base_url: up.url, ...extra },
  });
  expect(c.status).toBe(201);
  return c.body.api_id as string;
}

describe('credentials, verify, publish, unpublish', () => {
  it('stores the secret encrypted and never returns it', async () => {
    const id = await draft('Secret API');
    const r = await call(h.control.url, 'PUT', `/v1/provider/apis/${id}/credentials`, {
      token: org.key,
      body: { secret: SECRET, injection: 'bearer' },
    });
    expect(r.status).toBe(200);
    expect(r.body.credentials).toMatchObject({ set: true, injection: 'bearer' });
    expect(r.body.credentials.fingerprint).toMatch(/^sha256:[0-9a-f]{12}$/);
    const row = await db.db.selectFrom('apis').select(['secret_enc']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.secret_enc).toMatch(/^v1:/);
    expect(row.secret_enc).not.toContain(SECRET);
    for (const path of [`/v1/provider/apis/${id}`, '/v1/provider/apis']) {
      const g = await call(h.control.url, 'GET', path, { token: org.key });
      expect(JSON.stringify(g.body)).not.toContain(SECRET);
    }
    const bad = await call(h.control.url, 'PUT', `/v1/provider/apis/${id}/credentials`, {
      token: org.key,
      body: { secret: 'x', injection: 'header' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });

  it('verify calls parameterless GET endpoints with the stored credential and records status and latency', async () => {
    const id = await draft('Verify API');
    const fail = await call(h.control.url, 'POST', `/v1/provider/apis/${id}/verify`, { token: org.key });
    expect(fail.status).toBe(200);
    expect(fail.body.ok).toBe(false);
    expect(fail.body.checks[0]).toMatchObject({ path: '/ping', status: 401, ok: false });
    await call(h.control.url, 'PUT', `/v1/provider/apis/${id}/credentials`, {
      token: org.key,
      body: { secret: SECRET },
    });
    const ok = await call(h.control.url, 'POST', `/v1/provider/apis/${id}/verify`, { token: org.key });
    expect(ok.body.ok).toBe(true);
    // Its own prefix: `evt_` is what email verifications (now `emv_`) and payment events used.
    expect(ok.body.verification_id).toMatch(/^vrf_/);
    expect(ok.body.checks).toHaveLength(1); // /items/{id} needs a parameter, POST is never called
    expect(ok.body.checks[0]).toMatchObject({ method: 'GET', path: '/ping', status: 200, ok: true });
    expect(typeof ok.body.checks[0].latency_ms).toBe('number');
    expect(up.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
    const rows = await db.db.selectFrom('verifications').selectAll().where('api_id', '=', id).execute();
    expect(rows.map((r) => r.ok)).toEqual([0, 1]);
  });

  it('publish needs accept_terms: true, then runs verify unless skip_verify', async () => {
    const id = await draft('Publish API');
    const noTerms = await call(h.control.url, 'POST', `/v1/provider/apis/${id}/publish`, { token: org.key, body: {} });
    expect(noTerms.status).toBe(400);
    expect(noTerms.body.code).toBe('accept_terms_required');
    const failing = await call(h.control.url, 'POST', `/v1/provider/apis/${id}/publish`, {
      token: org.key,
      body: { accept_terms: true },
    });
    expect(failing.status).toBe(422);
    expect(failing.body.code).toBe('verification_failed');
    expect(failing.body.checks[0].status).toBe(401);
    expect(
      (await db.db.selectFrom('apis').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status,
    ).toBe('draft');

    await call(h.control.url, 'PUT', `/v1/provider/apis/${id}/credentials`, {
      token: org.key,
      body: { secret: SECRET },
    });
    const live = await call(h.control.url, 'POST', `/v1/provider/apis/${id}/publish`, {
      token: org.key,
      body: { accept_terms: true },
    });
    expect(live.status).toBe(200);
    expect(live.body.status).toBe('live');
    expect(live.body.verify.ok).toBe(true);
    const twice = await call(h.control.url, 'POST', `/v1/provider/apis/${id}/publish`, {
      token: org.key,
      body: { accept_terms: true },
    });
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe('invalid_state');
    const prof = await db.db.selectFrom('providers').selectAll().where('org_id', '=', org.orgId).executeTakeFirst();
    expect(prof).toBeDefined();
    const acts = await db.db.selectFrom('activity').select('kind').where('org_id', '=', org.orgId).execute();
    expect(acts.map((a) => a.kind)).toEqual(expect.arrayContaining(['publish', 'new_provider']));

    const off = await call(h.control.url, 'POST', `/v1/provider/apis/${id}/unpublish`, { token: org.key });
    expect(off.status).toBe(200);
    expect(off.body.status).toBe('draft');
    const offAgain = await call(h.control.url, 'POST', `/v1/provider/apis/${id}/unpublish`, { token: org.key });
    expect(offAgain.body.code).toBe('invalid_state');
  });

  it('skip_verify publishes without calling the upstream; missing base_url is refused', async () => {
    const id = await draft('Skip API');
    const before = up.requests.length;
    const r = await call(h.control.url, 'POST', `/v1/provider/apis/${id}/publish`, {
      token: org.key,
      body: { accept_terms: true, skip_verify: true },
    });
    expect(r.status).toBe(200);
    expect(r.body.verify).toBeNull();
    expect(up.requests.length).toBe(before);
    const c = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: smallOpenApi('No Base') },
    });
    const nb = await call(h.control.url, 'POST', `/v1/provider/apis/${c.body.api_id}/publish`, {
      token: org.key,
      body: { accept_terms: true, skip_verify: true },
    });
    expect(nb.status).toBe(409);
    expect(nb.body.detail).toMatch(/base_url/);
  });

  it('a live listing keeps its slug', async () => {
    const id = await draft('Slug Keeper');
    await call(h.control.url, 'POST', `/v1/provider/apis/${id}/publish`, {
      token: org.key,
      body: { accept_terms: true, skip_verify: true },
    });
    const r = await call(h.control.url, 'PATCH', `/v1/provider/apis/${id}`, {
      token: org.key,
      body: { slug: 'new-slug-here' },
    });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('invalid_state');
  });
});
