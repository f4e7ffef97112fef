/**
 * Issue 24.4: an org refused with 428 by the real gateway sees that API on its dashboard's terms page and in
 * GET /v1/terms/pending (the same service), even though it never completed a call; accepting clears it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebFixture, type WebFixture } from './web-fixture.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { grantCredits, seedKey, seedListing, seedOrg } from '../../helpers/db.js';
import { call } from '../../helpers/http.js';
import { gw, until } from '../gateway/fixture.js';
import { newId } from '../../../core/ids.js';

let f: WebFixture;
let g: RunningGateway;
const slug = `termsy-${Math.random().toString(36).slice(2, 8)}`;
let docId: string;

beforeAll(async () => {
  f = await startWebFixture();
  const provider = await seedOrg(f.db);
  const { apiId } = await seedListing(f.db, {
    orgId: provider.orgId,
    slug,
    baseUrl: 'http://127.0.0.1:9',
    endpoints: [{ method: 'GET', path: '/x', priceCents: 0 }],
    injection: 'none',
  });
  docId = newId('doc');
  const now = Date.now();
  await f.db.db
    .insertInto('legal_documents')
    .values({
      id: docId,
      org_id: provider.orgId,
      api_id: apiId,
      kind: 'terms',
      source: 'hosted',
      version: '2.1.0',
      markdown: '# Terms',
      acceptance_mode: 'required',
      status: 'activated',
      created_at: now,
      activated_at: now,
    })
    .execute();
  g = await startGateway(f.h.dataDir);
});
afterAll(async () => {
  await g?.stop();
  await f?.stop();
});

describe('428 refusals count as terms awaiting acceptance', () => {
  it('lists the refused API on the terms page and in GET /v1/terms/pending, once, with the refusal time', async () => {
    const web = await f.signIn('refused@example.com');
    const user = await f.db.db
      .selectFrom('users')
      .select(['org_id', 'id'])
      .where('email', '=', 'refused@example.com')
      .executeTakeFirstOrThrow();
    const before = await web.get('/dashboard/terms');
    expect(before.html).toContain('Nothing waiting');
    const key = await seedKey(f.db, user.org_id);
    await grantCredits(f.db, user.org_id, 100);
    for (let i = 0; i < 3; i++) {
      const r = await gw(g.url, 'GET', `/${slug}/x`, { key: key.key });
      expect(r.status).toBe(428);
    }
    expect(
      await until(
        async () =>
          (await f.db.db.selectFrom('terms_refusals').select('api_id').where('org_id', '=', user.org_id).execute())
            .length === 1,
        5000,
      ),
    ).toBe(true);
    const page = await web.get('/dashboard/terms');
    expect(page.html).toContain(`href="/apis/${slug}#terms"`);
    expect(page.html).toContain('version 2.1.0 (required)');
    expect(page.html).toMatch(/a call was refused \d{4}-\d\d-\d\d/);
    const rest = await call(f.h.control.url, 'GET', '/v1/terms/pending', { token: key.key });
    expect(rest.status).toBe(200);
    expect(rest.body.data).toEqual([
      {
        api_slug: slug,
        api_name: slug,
        document_id: docId,
        version: '2.1.0',
        acceptance_mode: 'required',
        refused_at: expect.stringMatching(/^\d{4}-/),
        accept_url: `/apis/${slug}#terms`,
      },
    ]);

    await f.db.db
      .insertInto('terms_acceptances')
      .values({
        id: newId('acc'),
        org_id: user.org_id,
        api_id: (await f.db.db.selectFrom('apis').select('id').where('slug', '=', slug).executeTakeFirstOrThrow()).id,
        document_id: docId,
        user_id: user.id,
        accepted_at: Date.now(),
      })
      .execute();
    expect((await web.get('/dashboard/terms')).html).toContain('Nothing waiting');
  });
});
