/**
 * Services own authorization: called directly, with no route in front, a use-case function refuses a principal
 * the spec does not allow (test/unit/service-authorization.test.ts checks that every one asserts something).
 */
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../../core/errors.js';
import { principalFromToken } from '../../../control/auth/principal.js';
import { acceptTerms, activateDocument, createDocument, mayAcceptTerms } from '../../../control/terms/terms.service.js';
import { listKeys } from '../../../control/keys/keys.service.js';
import { searchCatalog } from '../../../control/catalog/search.service.js';
import { registerAnonymous } from '../../../control/orgs/orgs.service.js';
import { seedKey, seedListing, seedOrg } from '../../helpers/db.js';
import { useInProcessControl } from '../../helpers/in-process.js';

const control = useInProcessControl();

async function refusal(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof SvcError) return e.code;
    throw e;
  }
  return 'allowed';
}

async function listingWithTerms() {
  const { ctx } = control();
  const provider = await seedOrg(ctx);
  const slug = `terms-${provider.orgId.slice(-8).toLowerCase()}`;
  const { apiId } = await seedListing(ctx, {
    orgId: provider.orgId,
    slug,
    baseUrl: 'http://127.0.0.1:9',
    endpoints: [{ method: 'GET', path: '/x', priceCents: 1 }],
  });
  const as = await principalFromToken(ctx, provider.session);
  const doc = await createDocument(ctx, as, {
    kind: 'terms',
    source: 'hosted',
    version: '1.0.0',
    markdown: 'Be kind.',
    api_id: apiId,
    acceptance_mode: 'required',
  });
  await activateDocument(ctx, as, doc.id);
  return { apiId, slug };
}

describe('acceptTerms: an org owner or admin, through a session (SPEC: terms acceptance)', () => {
  it("refuses a key (even its owner's), accepts for an admin session, and records nothing when refused", async () => {
    const { ctx } = control();
    const { apiId } = await listingWithTerms();
    const consumer = await seedOrg(ctx, { role: 'admin' });
    const ownersKey = await principalFromToken(ctx, consumer.key);
    const agentKey = await principalFromToken(
      ctx,
      (await seedKey(ctx, consumer.orgId, { scopes: ['catalog:read'] })).key,
    );
    expect(await refusal(() => acceptTerms(ctx, ownersKey, apiId))).toBe('session_required');
    expect(await refusal(() => acceptTerms(ctx, agentKey, apiId))).toBe('session_required');
    expect(await refusal(() => acceptTerms(ctx, undefined, apiId))).toBe('unauthorized');
    const none = await ctx.db
      .selectFrom('terms_acceptances')
      .select('id')
      .where('org_id', '=', consumer.orgId)
      .execute();
    expect(none).toEqual([]);
    expect([mayAcceptTerms(ownersKey), mayAcceptTerms(undefined)]).toEqual([false, false]);

    const admin = await principalFromToken(ctx, consumer.session);
    expect(mayAcceptTerms(admin)).toBe(true);
    const r = await acceptTerms(ctx, admin, apiId);
    expect([r.already, r.acceptance.user_id, r.acceptance.org_id]).toEqual([false, consumer.userId, consumer.orgId]);
  });

  it('a registered agent key (no user behind it) cannot accept either', async () => {
    const { ctx } = control();
    const { apiId } = await listingWithTerms();
    const reg = await registerAnonymous(ctx);
    expect(await refusal(async () => acceptTerms(ctx, await principalFromToken(ctx, reg.api_key), apiId))).toBe(
      'session_required',
    );
  });
});

describe('other services check their own scope', () => {
  it('listKeys needs keys:write; a public read refuses a key without catalog:read but serves a stranger', async () => {
    const { ctx } = control();
    const org = await seedOrg(ctx);
    const narrow = await principalFromToken(ctx, (await seedKey(ctx, org.orgId, { scopes: ['usage:read'] })).key);
    expect(await refusal(() => listKeys(ctx.db, narrow, 10, 0))).toBe('insufficient_scope');
    expect(await refusal(() => listKeys(ctx.db, undefined, 10, 0))).toBe('unauthorized');
    const page = await listKeys(ctx.db, await principalFromToken(ctx, org.session), 10, 0);
    expect(page.data.map((k) => k.id)).toContain(org.keyId);
    const query = { limit: 5, offset: 0 } as const;
    expect(await refusal(() => searchCatalog(ctx.db, narrow, query))).toBe('insufficient_scope');
    expect(await refusal(() => searchCatalog(ctx.db, undefined, query))).toBe('allowed');
  });
});
