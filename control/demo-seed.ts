/**
 * Seeds the demo listing on a fresh data dir so a newcomer's first search and call work: a demo provider org and
 * profile, and `demo-weather` (free and paid endpoints) pointing at the demo upstream. Idempotent: a later start
 * only re-points base_url when SVC_DEMO_UPSTREAM_PORT changed.
 */
import type { AppContext } from './context.js';
import { recordChange } from '../core/db/changes.js';
import { newId } from '../core/ids.js';
import { createApi, setCredentials } from './providers/apis.service.js';
import { publishApi } from './providers/publish.service.js';
import { setPricing } from './pricing/pricing.service.js';
import { DEMO_OPENAPI, DEMO_PRICES, DEMO_PROVIDER_SLUG, DEMO_SLUG, DEMO_UPSTREAM_SECRET } from '../demo/demo-api.js';
import { operatorPrincipal } from './auth/principal.js';

export async function seedDemo(ctx: AppContext): Promise<void> {
  const baseUrl = `http://127.0.0.1:${ctx.config.ports.demoUpstream}`;
  const now = ctx.clock.now();
  const existing = await ctx.db
    .selectFrom('apis')
    .select(['id', 'base_url'])
    .where('slug', '=', DEMO_SLUG)
    .executeTakeFirst();
  if (existing) {
    if (existing.base_url !== baseUrl) await _pointAt(ctx, existing.id, baseUrl, now);
    return;
  }
  const operator = operatorPrincipal(await demoOrg(ctx, now));
  // The base URL is set by _pointAt, not by createApi: the production SSRF guard rightly refuses a provider's
  // loopback upstream, but the demo upstream is one the operator started on this machine (SVC_DEMO=true).
  const { apiId } = await createApi(ctx, operator, {
    body: DEMO_OPENAPI,
    slug: DEMO_SLUG,
    category: 'weather',
    tags: ['weather', 'demo', 'text', 'sentiment'],
    summary: 'Demo weather and sentiment API shipped with svc: free current weather, paid forecasts.',
    health_path: '/health',
  });
  await _pointAt(ctx, apiId, baseUrl, now);
  await setCredentials(ctx, operator, apiId, { secret: DEMO_UPSTREAM_SECRET, injection: 'bearer' });
  const endpoints = await ctx.db
    .selectFrom('endpoints')
    .select(['id', 'method', 'path'])
    .where('api_id', '=', apiId)
    .execute();
  const prices = endpoints
    .filter((e) => DEMO_PRICES[`${e.method} ${e.path}`] !== undefined)
    .map((e) => ({ endpoint_id: e.id, price_cents: DEMO_PRICES[`${e.method} ${e.path}`]! }));
  await setPricing(ctx, operator, apiId, prices);
  // The upstream may start after us: publishing must not depend on it being up.
  await publishApi(ctx, operator, apiId, { accept_terms: true, skip_verify: true });
  ctx.log.info('demo listing seeded', { slug: DEMO_SLUG, base_url: baseUrl });
}

async function _pointAt(ctx: AppContext, apiId: string, baseUrl: string, now: number): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await trx.updateTable('apis').set({ base_url: baseUrl, updated_at: now }).where('id', '=', apiId).execute();
    await recordChange(trx, 'api', apiId, now);
  });
}

async function demoOrg(ctx: AppContext, now: number): Promise<string> {
  const prov = await ctx.db
    .selectFrom('providers')
    .select('org_id')
    .where('slug', '=', DEMO_PROVIDER_SLUG)
    .executeTakeFirst();
  if (prov) return prov.org_id;
  const orgId = newId('org', now);
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('orgs')
      .values({
        id: orgId,
        name: 'svc demo provider',
        origin: 'admin',
        status_reason: null,
        email: null,
        email_verified_at: null,
        created_at: now,
      })
      .execute();
    await trx.insertInto('balances').values({ org_id: orgId, updated_at: now }).execute();
    await trx
      .insertInto('providers')
      .values({
        org_id: orgId,
        slug: DEMO_PROVIDER_SLUG,
        display_name: 'svc demo',
        bio: 'The demo provider that ships with svc.',
        website: null,
        logo_url: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await trx
      .insertInto('activity')
      .values({
        id: newId('act', now),
        kind: 'new_provider',
        api_id: null,
        org_id: orgId,
        data_json: JSON.stringify({ slug: DEMO_PROVIDER_SLUG, display_name: 'svc demo' }),
        created_at: now,
      })
      .execute();
  });
  return orgId;
}
