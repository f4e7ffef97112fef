/**
 * Provider-side routes (`provider:write`): listings (apis.routes.ts), own profile, analytics; plus the public
 * provider directory (`/v1/providers`, open like the catalog: docs/catalog.md).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { sql } from 'kysely';
import { newRouter } from '../lib/http.js';
import { bearer, jsonBody, jsonResponse, problemResponses } from '../lib/openapi.js';
import { requireScope } from '../auth/rest-auth.js';
import { PaginationQuery, pageOf } from '../lib/pagination.js';
import { InstantQuery } from '../lib/instant-query.js';
import { DAY_MS } from '../../core/clock.js';
import { SvcError } from '../../core/errors.js';
import { linkUrlSchema } from '../lib/link-url.js';
import { catalogReader } from '../catalog/catalog-access.js';
import { toListingSummary, listingSummaries } from '../catalog/listing-summary.js';
import { apisRoutes } from './apis.routes.js';
import { providerAnalytics } from './analytics.service.js';
import { getMyProfile, toProfile, updateMyProfile } from './profile.service.js';

export const providersRoutes = newRouter();
providersRoutes.route('/', apisRoutes);

const Json = z.record(z.string(), z.unknown()).openapi('ProviderProfileJson');
const ok = (d: string) => ({ 200: jsonResponse(Json, d), ...problemResponses });
const ProfileBody = z
  .object({
    slug: z.string().min(3).max(60).optional(),
    display_name: z.string().trim().min(1).max(100).optional(),
    bio: z.string().max(2000).nullable().optional(),
    website: linkUrlSchema(500).nullable().optional(),
    logo_url: linkUrlSchema(500).nullable().optional(),
  })
  .strict();

providersRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/profile',
    tags: ['provider'],
    security: bearer,
    responses: ok('My provider profile'),
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    return c.json(toProfile(await getMyProfile(c.get('ctx'), p.orgId)), 200);
  },
);

providersRoutes.openapi(
  createRoute({
    method: 'patch',
    path: '/v1/provider/profile',
    tags: ['provider'],
    security: bearer,
    request: jsonBody(ProfileBody),
    responses: ok('Updated (created if missing)'),
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    return c.json(toProfile(await updateMyProfile(c.get('ctx'), p.orgId, c.req.valid('json'))), 200);
  },
);

// The same bounds as /v1/usage: plain dates or date-times.
const AnalyticsQuery = z.object({
  from: InstantQuery.optional().openapi({ description: 'ISO date or date-time, default 30 days before `to`' }),
  to: InstantQuery.optional().openapi({ description: 'ISO date or date-time, default now' }),
});

providersRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/analytics',
    tags: ['provider'],
    security: bearer,
    request: { query: AnalyticsQuery },
    responses: ok('Gross volume, calls, earnings, fee, payouts; per listing and endpoint'),
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    const ctx = c.get('ctx');
    const q = c.req.valid('query');
    const to = q.to ?? ctx.clock.now();
    const from = q.from ?? to - 30 * DAY_MS;
    if (from >= to)
      throw new SvcError('validation_failed', '`from` must be before `to`', {
        errors: [{ path: 'from', message: 'must be before to' }],
      });
    return c.json(await providerAnalytics(ctx.db, p.orgId, from, to), 200);
  },
);

const DirectoryQuery = PaginationQuery.extend({ query: z.string().max(200).optional() });

providersRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/providers',
    tags: ['catalog'],
    request: { query: DirectoryQuery },
    responses: ok('Public provider directory (paged)'),
  }),
  async (c) => {
    catalogReader(c);
    const { db } = c.get('ctx');
    const { query, limit, offset } = c.req.valid('query');
    let q = db
      .selectFrom('providers')
      .leftJoin('apis', (j) =>
        j
          .onRef('apis.org_id', '=', 'providers.org_id')
          .on('apis.status', '=', 'live')
          .on('apis.suspended_at', 'is', null),
      )
      .selectAll('providers')
      .select(sql<number>`count(apis.id)`.as('live_listings'))
      .groupBy('providers.org_id');
    if (query) {
      const like = `%${query.replace(/[%_\\]/g, (m) => '\\' + m)}%`;
      q = q.where((eb) =>
        eb.or([
          sql<boolean>`providers.display_name LIKE ${like} ESCAPE '\\'`,
          sql<boolean>`providers.slug LIKE ${like} ESCAPE '\\'`,
          sql<boolean>`coalesce(providers.bio, '') LIKE ${like} ESCAPE '\\'`,
        ]),
      );
    }
    const rows = await q
      .orderBy('live_listings', 'desc')
      .orderBy('providers.created_at')
      .limit(limit + 1)
      .offset(offset)
      .execute();
    const page = pageOf(rows, limit, offset);
    return c.json({ ...page, data: page.data.map((r) => toProfile(r, Number(r.live_listings))) }, 200);
  },
);

providersRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/providers/{slug}',
    tags: ['catalog'],
    request: { params: z.object({ slug: z.string().min(1).max(80) }) },
    responses: ok('A provider profile with its live listings'),
  }),
  async (c) => {
    catalogReader(c);
    const { db } = c.get('ctx');
    const prov = await db
      .selectFrom('providers')
      .selectAll()
      .where('slug', '=', c.req.valid('param').slug)
      .executeTakeFirst();
    if (!prov) throw new SvcError('not_found', 'No provider with this slug');
    const listings = await listingSummaries(db, { orgId: prov.org_id });
    return c.json({ ...toProfile(prov, listings.length), listings: listings.map(toListingSummary) }, 200);
  },
);
