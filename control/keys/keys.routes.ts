/** /v1/keys: list, create, patch caps, revoke. All need `keys:write`. */
import { createRoute, z } from '@hono/zod-openapi';
import { newRouter } from '../lib/http.js';
import { bearer, centsField, jsonBody, jsonResponse, problemResponses } from '../lib/openapi.js';
import { requireScope } from '../auth/rest-auth.js';
import { ALL_SCOPES } from '../../core/scopes.js';
import { PageOf, PaginationQuery } from '../lib/pagination.js';
import { createKeyFor, listKeys, patchKey, revokeKey } from './keys.service.js';

export const keysRoutes = newRouter();

const KeyResourceSchema = z
  .object({
    id: z.string(),
    object: z.literal('api_key'),
    name: z.string(),
    start: z.string(),
    scopes: z.array(z.enum(ALL_SCOPES)),
    approval_mode: z.enum(['auto', 'free_only']),
    budget_cents: z.number().int().nullable(),
    per_call_max_cents: z.number().int().nullable(),
    daily_cap_cents: z.number().int().nullable(),
    rate_limit_per_min: z.number().int().nullable(),
    spent_cents: z.number().int(),
    origin: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    revoked_at: z.string().nullable(),
    last_used_at: z.string().nullable(),
  })
  .openapi('ApiKey');

const caps = {
  budget_cents: centsField
    .nullable()
    .optional()
    .openapi({ description: 'Lifetime spend cap in cents; null clears it' }),
  per_call_max_cents: centsField
    .nullable()
    .optional()
    .openapi({ description: 'Refuse any single call priced above this' }),
  daily_cap_cents: centsField.nullable().optional().openapi({ description: 'Spend cap per UTC day' }),
  approval_mode: z
    .enum(['auto', 'free_only'])
    .optional()
    .openapi({ description: 'auto: any endpoint within caps; free_only: price-0 endpoints only' }),
  rate_limit_per_min: z.number().int().min(1).max(1_000_000).nullable().optional(),
};

const CreateKeyBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    scopes: z.array(z.enum(ALL_SCOPES)).min(1).optional().openapi({ description: "Defaults to the creator's scopes" }),
    ...caps,
  })
  .strict();

const PatchKeyBody = z.object({ name: z.string().trim().min(1).max(100).optional(), ...caps }).strict();

const KeyIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

keysRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/keys',
    tags: ['keys'],
    security: bearer,
    request: { query: PaginationQuery },
    responses: {
      200: jsonResponse(PageOf(KeyResourceSchema), 'Keys of the org, newest first, one page'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireScope(c, 'keys:write');
    const { limit, offset } = c.req.valid('query');
    return c.json(await listKeys(c.get('ctx').db, p.orgId, limit, offset), 200);
  },
);

keysRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/keys',
    tags: ['keys'],
    security: bearer,
    request: jsonBody(CreateKeyBody),
    responses: {
      201: jsonResponse(
        z.object({ api_key: z.string(), key: KeyResourceSchema }),
        'The key; `api_key` is shown only this once',
      ),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireScope(c, 'keys:write');
    const { db, clock } = c.get('ctx');
    const { resource, plaintext } = await createKeyFor(db, p, c.req.valid('json'), clock.now());
    c.header('cache-control', 'no-store');
    return c.json({ api_key: plaintext, key: resource }, 201);
  },
);

keysRoutes.openapi(
  createRoute({
    method: 'patch',
    path: '/v1/keys/{id}',
    tags: ['keys'],
    security: bearer,
    request: { params: KeyIdParam, ...jsonBody(PatchKeyBody) },
    responses: { 200: jsonResponse(KeyResourceSchema, 'The updated key'), ...problemResponses },
  }),
  async (c) => {
    const p = requireScope(c, 'keys:write');
    const { db, clock } = c.get('ctx');
    return c.json(await patchKey(db, p, c.req.valid('param').id, c.req.valid('json'), clock.now()), 200);
  },
);

keysRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/v1/keys/{id}',
    tags: ['keys'],
    security: bearer,
    request: { params: KeyIdParam },
    responses: {
      200: jsonResponse(KeyResourceSchema, 'The revoked key (revoking twice is harmless)'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireScope(c, 'keys:write');
    const { db, clock } = c.get('ctx');
    return c.json(await revokeKey(db, p, c.req.valid('param').id, clock.now()), 200);
  },
);
