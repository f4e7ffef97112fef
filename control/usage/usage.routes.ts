/** GET /v1/usage: the caller's org usage history and summary (`usage:read`). */
import { createRoute, z } from '@hono/zod-openapi';
import { newRouter } from '../lib/http.js';
import { bearer, jsonResponse, problemResponses } from '../lib/openapi.js';
import { PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT, PAGE_MAX_OFFSET } from '../lib/pagination.js';
import { SvcError } from '../../core/errors.js';
import { DAY_MS } from '../../core/clock.js';
import { InstantQuery as instant } from '../lib/instant-query.js';
import { requireScope } from '../auth/rest-auth.js';
import { usageSummary } from './usage.service.js';
import { UsageSummarySchema } from '../../core/schemas/usage.schemas.js';

export const usageRoutes = newRouter();

export const USAGE_DEFAULT_DAYS = 30;
export const USAGE_MAX_DAYS = 366;

const UsageQuery = z.object({
  from: instant
    .optional()
    .openapi({ description: `Inclusive start; default ${USAGE_DEFAULT_DAYS} days before \`to\`` }),
  to: instant.optional().openapi({ description: 'Exclusive end; default now' }),
  key_id: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(PAGE_MAX_LIMIT).default(PAGE_DEFAULT_LIMIT),
  offset: z.coerce.number().int().min(0).max(PAGE_MAX_OFFSET).default(0),
});

usageRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/usage',
    tags: ['usage'],
    security: bearer,
    request: { query: UsageQuery },
    responses: {
      200: jsonResponse(UsageSummarySchema, 'Totals, per listing, per key, per UTC day, and the newest calls'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireScope(c, 'usage:read');
    const q = c.req.valid('query');
    const { db, clock } = c.get('ctx');
    const to = q.to ?? clock.now();
    const from = q.from ?? to - USAGE_DEFAULT_DAYS * DAY_MS;
    if (from >= to)
      throw new SvcError('validation_failed', '`from` must be before `to`', {
        errors: [{ path: 'from', message: 'must be before to' }],
      });
    if (to - from > USAGE_MAX_DAYS * DAY_MS) {
      throw new SvcError('validation_failed', `The range may span at most ${USAGE_MAX_DAYS} days`, {
        errors: [{ path: 'from', message: `range over ${USAGE_MAX_DAYS} days` }],
      });
    }
    return c.json(
      await usageSummary(db, { orgId: p.orgId, from, to, keyId: q.key_id, limit: q.limit, offset: q.offset }),
      200,
    );
  },
);
