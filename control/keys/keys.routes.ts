/** /v1/keys: list, create, patch caps, revoke. All need `keys:write`. */
import { createRoute, z } from '@hono/zod-openapi';
import { newRouter } from '../lib/http.js';
import { bearer, jsonBody, jsonResponse, problemResponses } from '../lib/openapi.js';
import {
  CreatedKeySchema,
  CreateKeyInputSchema,
  KeyIdSchema,
  KeyResourceSchema,
  PatchKeyInputSchema,
} from '../../core/schemas/keys.schemas.js';
import { PageOf, PaginationQuerySchema } from '../../core/schemas/common.schemas.js';
import { createKeyFor, listKeys, patchKey, revokeKey } from './keys.service.js';

export const keysRoutes = newRouter();

const KeyIdParam = z.object({ id: KeyIdSchema.openapi({ param: { name: 'id', in: 'path' } }) });

keysRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/keys',
    tags: ['keys'],
    security: bearer,
    request: { query: PaginationQuerySchema },
    responses: {
      200: jsonResponse(PageOf(KeyResourceSchema), 'Keys of the org, newest first, one page'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const { limit, offset } = c.req.valid('query');
    return c.json(await listKeys(c.get('ctx').db, c.get('principal'), limit, offset), 200);
  },
);

keysRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/keys',
    tags: ['keys'],
    security: bearer,
    request: jsonBody(CreateKeyInputSchema),
    responses: {
      201: jsonResponse(CreatedKeySchema, 'The key; `api_key` is shown only this once'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const { db, clock } = c.get('ctx');
    const { resource, plaintext } = await createKeyFor(db, c.get('principal'), c.req.valid('json'), clock.now());
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
    request: { params: KeyIdParam, ...jsonBody(PatchKeyInputSchema) },
    responses: { 200: jsonResponse(KeyResourceSchema, 'The updated key'), ...problemResponses },
  }),
  async (c) => {
    const { db, clock } = c.get('ctx');
    return c.json(
      await patchKey(db, c.get('principal'), c.req.valid('param').id, c.req.valid('json'), clock.now()),
      200,
    );
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
    const { db, clock } = c.get('ctx');
    return c.json(await revokeKey(db, c.get('principal'), c.req.valid('param').id, clock.now()), 200);
  },
);
