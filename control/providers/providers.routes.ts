/**
 * Provider-side routes (`provider:write`): listings (apis.routes.ts), own profile, analytics; plus the public
 * provider directory (`/v1/providers`, open like the catalog: docs/catalog.md).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { newRouter } from '../lib/http.js';
import { bearer, jsonBody, okResponses } from '../lib/openapi.js';
import { DAY_MS } from '../../core/clock.js';
import { SvcError } from '../../core/errors.js';
import { apisRoutes } from './apis.routes.js';
import { providerAnalytics } from './analytics.service.js';
import { getMyProfile, listProviders, providerPage, toProfile, updateMyProfile } from './profile.service.js';
import {
  ProviderAnalyticsSchema,
  ProviderAnalyticsQuerySchema,
  ProviderDirectoryQuerySchema,
  ProviderDirectorySchema,
  ProviderPageSchema,
  ProviderProfileSchema,
  ProfileUpdateInputSchema,
} from '../../core/schemas/providers.schemas.js';

export const providersRoutes = newRouter();
providersRoutes.route('/', apisRoutes);

providersRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/profile',
    tags: ['provider'],
    security: bearer,
    responses: okResponses(ProviderProfileSchema, 'My provider profile'),
  }),
  async (c) => {
    return c.json(toProfile(await getMyProfile(c.get('ctx'), c.get('principal'))), 200);
  },
);

providersRoutes.openapi(
  createRoute({
    method: 'patch',
    path: '/v1/provider/profile',
    tags: ['provider'],
    security: bearer,
    request: jsonBody(ProfileUpdateInputSchema),
    responses: okResponses(ProviderProfileSchema, 'Updated (created if missing)'),
  }),
  async (c) => {
    return c.json(toProfile(await updateMyProfile(c.get('ctx'), c.get('principal'), c.req.valid('json'))), 200);
  },
);

providersRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/analytics',
    tags: ['provider'],
    security: bearer,
    request: { query: ProviderAnalyticsQuerySchema },
    responses: okResponses(
      ProviderAnalyticsSchema,
      'Gross volume, calls, earnings, fee, payouts; per listing and endpoint',
    ),
  }),
  async (c) => {
    const ctx = c.get('ctx');
    const q = c.req.valid('query');
    const to = q.to ?? ctx.clock.now();
    const from = q.from ?? to - 30 * DAY_MS;
    if (from >= to)
      throw new SvcError('validation_failed', '`from` must be before `to`', {
        errors: [{ path: 'from', message: 'must be before to' }],
      });
    return c.json(await providerAnalytics(ctx.db, c.get('principal'), from, to), 200);
  },
);

providersRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/providers',
    tags: ['catalog'],
    request: { query: ProviderDirectoryQuerySchema },
    responses: okResponses(ProviderDirectorySchema, 'Public provider directory (paged)'),
  }),
  async (c) => {
    return c.json(await listProviders(c.get('ctx').db, c.get('principal'), c.req.valid('query')), 200);
  },
);

providersRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/providers/{slug}',
    tags: ['catalog'],
    request: { params: z.object({ slug: z.string().min(1).max(80) }) },
    responses: okResponses(ProviderPageSchema, 'A provider profile with its live listings'),
  }),
  async (c) => {
    return c.json(await providerPage(c.get('ctx').db, c.get('principal'), c.req.valid('param').slug), 200);
  },
);
