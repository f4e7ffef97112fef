/** GET /v1/usage: the caller's org usage history and summary (`usage:read`). */
import { createRoute } from '@hono/zod-openapi';
import { newRouter } from '../lib/http.js';
import { bearer, jsonResponse, problemResponses } from '../lib/openapi.js';
import { usageForWindow } from './usage.service.js';
import { UsageQuerySchema, UsageSummarySchema } from '../../core/schemas/usage.schemas.js';

export const usageRoutes = newRouter();

usageRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/usage',
    tags: ['usage'],
    security: bearer,
    request: { query: UsageQuerySchema },
    responses: {
      200: jsonResponse(UsageSummarySchema, 'Totals, per listing, per key, per UTC day, and the newest calls'),
      ...problemResponses,
    },
  }),
  async (c) => {
    return c.json(await usageForWindow(c.get('ctx'), c.get('principal'), c.req.valid('query')), 200);
  },
);
