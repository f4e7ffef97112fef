import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { createLiveListing, startStubUpstream, type LiveListing, type StubUpstream } from '../../helpers/catalog.js';
import type { DbHandles } from '../../../core/db/database.js';

let h: ControlHarness;
let db: DbHandles;
let up: StubUpstream;
let provider: SeededOrg;
let consumer: SeededOrg;
let listing: LiveListing;

beforeAll(async () => {
  up = await startStubUpstream();
  h = await startControl();
  db = openTestDb(h.dataDir);
  provider = await seedOrg(db);
  consumer = await seedOrg(db);
  listing = await createLiveListing(h.control.url, provider.key, {
    baseUrl: up.url,
    name: 'Terms API',
    prices: { 'GET /ping': 5 },
  });
});
afterAll(async () => {
  await db.close();
  await h.stop();
  await up.close();
});

const doc = (version: string, extra: Record<string, unknown> = {}) => ({
  kind: 'terms',
  source: 'hosted',
  version,
  markdown: `# Terms ${version}\nBe nice.`,
  api_id: listing.apiId,
  acceptance_mode: 'required',
  ...extra,
});

describe('provider documents and consumer terms', () => {
  it("accepts the spec's spelling acceptance-mode as well as acceptance_mode, but not both", async () => {
    const { acceptance_mode: _, ...base } = doc('9.0.0');
    const dashed = await call(h.control.url, 'POST', '/v1/provider/documents', {
      token: provider.key,
      body: { ...base, 'acceptance-mode': 'optional' },
    });
    expect(dashed.status).toBe(201);
    expect(dashed.body.acceptance_mode).toBe('optional');
    const both = await call(h.control.url, 'POST', '/v1/provider/documents', {
      token: provider.key,
      body: { ...base, version: '9.0.1', acceptance_mode: 'required', 'acceptance-mode': 'optional' },
    });
    expect(both.status).toBe(400);
    expect(both.body.errors[0].path).toBe('acceptance_mode');
    // Leave no extra document behind for the tests below that count them.
    await db.db.deleteFrom('legal_documents').where('id', '=', dashed.body.document_id).execute();
  });

  it('creates, lists and activates documents; validates fields', async () => {
    const bad = await call(h.control.url, 'POST', '/v1/provider/documents', { token: provider.key, body: doc('1.0') });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    const other = await call(h.control.url, 'POST', '/v1/provider/documents', {
      token: consumer.key,
      body: doc('1.0.0'),
    });
    expect(other.status).toBe(404);

    const c = await call(h.control.url, 'POST', '/v1/provider/documents', { token: provider.key, body: doc('1.0.0') });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({
      status: 'created',
      version: '1.0.0',
      acceptance_mode: 'required',
      activated_at: null,
    });
    const dup = await call(h.control.url, 'POST', '/v1/provider/documents', {
      token: provider.key,
      body: doc('1.0.0'),
    });
    expect(dup.status).toBe(409);

    const before = await call(h.control.url, 'GET', `/v1/apis/${listing.slug}/terms`, { token: consumer.key });
    expect(before.body).toMatchObject({ document: null, required: false });

    const list = await call(h.control.url, 'GET', `/v1/provider/documents?api_id=${listing.apiId}`, {
      token: provider.key,
    });
    expect(list.body.data).toHaveLength(1);
    const a = await call(h.control.url, 'POST', `/v1/provider/documents/${c.body.document_id}/activate`, {
      token: provider.key,
    });
    expect(a.status).toBe(200);
    expect(a.body.status).toBe('activated');
    const again = await call(h.control.url, 'POST', `/v1/provider/documents/${c.body.document_id}/activate`, {
      token: provider.key,
    });
    expect(again.body.code).toBe('invalid_state');
    const ch = await db.db
      .selectFrom('changes')
      .selectAll()
      .where('entity', '=', 'terms')
      .where('entity_id', '=', listing.apiId)
      .execute();
    expect(ch.length).toBe(1);
  });

  it('acceptance needs an owner/admin session, is per org and per version', async () => {
    const t = await call(h.control.url, 'GET', `/v1/apis/${listing.slug}/terms`, { token: consumer.key });
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ required: true, accepted: false });
    expect(t.body.document.version).toBe('1.0.0');
    expect(t.body.document.markdown).toContain('Be nice');

    const withKey = await call(h.control.url, 'POST', `/v1/apis/${listing.slug}/terms/accept`, { token: consumer.key });
    expect(withKey.status).toBe(401);
    expect(withKey.body.code).toBe('session_required');
    const anon = await call(h.control.url, 'POST', `/v1/apis/${listing.slug}/terms/accept`);
    expect(anon.status).toBe(401);

    const ok = await call(h.control.url, 'POST', `/v1/apis/${listing.slug}/terms/accept`, {
      token: consumer.session,
      body: { document_id: t.body.document.document_id },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ accepted: true, already_accepted: false, version: '1.0.0' });
    const twice = await call(h.control.url, 'POST', `/v1/apis/${listing.slug}/terms/accept`, {
      token: consumer.session,
    });
    expect(twice.body.already_accepted).toBe(true);
    const rows = await db.db.selectFrom('terms_acceptances').selectAll().where('org_id', '=', consumer.orgId).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ user_id: consumer.userId, document_id: t.body.document.document_id });
    expect(
      (await call(h.control.url, 'GET', `/v1/apis/${listing.slug}/terms`, { token: consumer.key })).body.accepted,
    ).toBe(true);

    // a third org has not accepted
    const third = await seedOrg(db);
    expect(
      (await call(h.control.url, 'GET', `/v1/apis/${listing.slug}/terms`, { token: third.key })).body.accepted,
    ).toBe(false);

    // a new activated version needs acceptance again; accepting the stale document id is refused
    const v2 = await call(h.control.url, 'POST', '/v1/provider/documents', { token: provider.key, body: doc('1.1.0') });
    await call(h.control.url, 'POST', `/v1/provider/documents/${v2.body.document_id}/activate`, {
      token: provider.key,
    });
    const after = await call(h.control.url, 'GET', `/v1/apis/${listing.slug}/terms`, { token: consumer.key });
    expect(after.body).toMatchObject({ accepted: false, required: true });
    expect(after.body.document.version).toBe('1.1.0');
    const stale = await call(h.control.url, 'POST', `/v1/apis/${listing.slug}/terms/accept`, {
      token: consumer.session,
      body: { document_id: t.body.document.document_id },
    });
    expect(stale.status).toBe(409);
    const fresh = await call(h.control.url, 'POST', `/v1/apis/${listing.slug}/terms/accept`, {
      token: consumer.session,
      body: { document_id: v2.body.document_id },
    });
    expect(fresh.body).toMatchObject({ accepted: true, version: '1.1.0' });
  });

  it('a malformed acceptance body is refused and accepts nothing, whatever its content type', async () => {
    const org = await seedOrg(db);
    const accept = (rawBody: string | undefined, contentType?: string) =>
      call(h.control.url, 'POST', `/v1/apis/${listing.slug}/terms/accept`, {
        token: org.session,
        ...(rawBody !== undefined ? { rawBody } : {}),
        headers: contentType ? { 'content-type': contentType } : {},
      });
    const wrongType = await accept('{"document_id":5}', 'application/json');
    expect([wrongType.status, wrongType.body.code]).toEqual([400, 'validation_failed']);
    expect(wrongType.body.errors[0].path).toBe('document_id');
    const unknownField = await accept('{"document":"doc_x"}', 'application/json');
    expect([unknownField.status, unknownField.body.code]).toEqual([400, 'validation_failed']);
    const notJson = await accept('{"document_id":', 'application/json');
    expect([notJson.status, notJson.body.code]).toEqual([400, 'invalid_json']);
    const notObject = await accept('["doc_x"]', 'application/json');
    expect([notObject.status, notObject.body.code]).toEqual([400, 'validation_failed']);
    // The same bodies without a JSON content type used to be ignored, accepting whatever version is active.
    for (const raw of ['{"document_id":5}', '{"document_id":', 'doc_x']) {
      const plain = await accept(raw, 'text/plain');
      expect([raw, plain.status, plain.body.code]).toEqual([raw, 415, 'unsupported_media_type']);
    }
    // ... and without any content type (a Blob body sends none).
    for (const raw of ['{"document_id":5}', '{"document_id":', '["doc_x"]']) {
      const res = await fetch(`${h.control.url}/v1/apis/${listing.slug}/terms/accept`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.session}` },
        body: new Blob([raw]),
      });
      const body = (await res.json()) as { code?: string };
      expect([raw, res.status, body.code]).toEqual([raw, 415, 'unsupported_media_type']);
    }
    const rows = () => db.db.selectFrom('terms_acceptances').selectAll().where('org_id', '=', org.orgId).execute();
    expect(await rows()).toHaveLength(0);

    // No body at all still means "the active version".
    const noBody = await accept(undefined);
    expect(noBody.status).toBe(200);
    expect(await rows()).toHaveLength(1);
  });

  it('an unknown or draft slug is listing_not_found', async () => {
    const r = await call(h.control.url, 'GET', '/v1/apis/no-such-api/terms', { token: consumer.key });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('listing_not_found');
  });
});
