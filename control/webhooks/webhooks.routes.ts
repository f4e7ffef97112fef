/** /v1/webhooks and /v1/alerts: thin adapters over webhooks.service.ts (which checks `billing:write` itself). */
import { createRoute, z } from '@hono/zod-openapi';
import { newRouter } from '../lib/http.js';
import { bearer, jsonBody, jsonResponse, problemResponses } from '../lib/openapi.js';
import { PaginationQuerySchema } from '../../core/schemas/common.schemas.js';
import {
  AlertSettingsSchema,
  CreatedWebhookSchema,
  CreateWebhookInputSchema,
  PatchAlertSettingsSchema,
  WebhookDeliveryListSchema,
  WebhookDeliverySchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookIdSchema,
} from '../../core/schemas/webhooks.schemas.js';
import {
  createWebhook,
  deleteWebhook,
  enableWebhook,
  getAlertSettings,
  getWebhook,
  listDeliveries,
  listWebhooks,
  patchAlertSettings,
  replayDelivery,
  testWebhook,
} from './webhooks.service.js';

export const webhooksRoutes = newRouter();

const IdParam = z.object({ id: WebhookIdSchema.openapi({ param: { name: 'id', in: 'path' } }) });
const tags = ['webhooks'];

webhooksRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/webhooks',
    tags,
    security: bearer,
    request: jsonBody(CreateWebhookInputSchema),
    responses: {
      201: jsonResponse(CreatedWebhookSchema, 'The endpoint; `secret` is shown only this once'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const created = await createWebhook(c.get('ctx'), c.get('principal'), c.req.valid('json'));
    c.header('cache-control', 'no-store');
    return c.json(created, 201);
  },
);

webhooksRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/webhooks',
    tags,
    security: bearer,
    request: { query: PaginationQuerySchema },
    responses: {
      200: jsonResponse(WebhookEndpointListSchema, 'Endpoints of the org, newest first'),
      ...problemResponses,
    },
  }),
  async (c) => c.json(await listWebhooks(c.get('ctx'), c.get('principal'), c.req.valid('query')), 200),
);

webhooksRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/webhooks/{id}',
    tags,
    security: bearer,
    request: { params: IdParam },
    responses: { 200: jsonResponse(WebhookEndpointSchema, 'The endpoint'), ...problemResponses },
  }),
  async (c) => c.json(await getWebhook(c.get('ctx'), c.get('principal'), c.req.valid('param').id), 200),
);

webhooksRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/v1/webhooks/{id}',
    tags,
    security: bearer,
    request: { params: IdParam },
    responses: { 204: { description: 'Deleted; its pending deliveries are dropped' }, ...problemResponses },
  }),
  async (c) => {
    await deleteWebhook(c.get('ctx'), c.get('principal'), c.req.valid('param').id);
    return c.body(null, 204);
  },
);

webhooksRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/webhooks/{id}/enable',
    tags,
    security: bearer,
    request: { params: IdParam },
    responses: { 200: jsonResponse(WebhookEndpointSchema, 'The endpoint, enabled again'), ...problemResponses },
  }),
  async (c) => c.json(await enableWebhook(c.get('ctx'), c.get('principal'), c.req.valid('param').id), 200),
);

webhooksRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/webhooks/{id}/test',
    tags,
    security: bearer,
    request: { params: IdParam },
    responses: {
      202: jsonResponse(z.object({ event_id: z.string() }), 'A webhook.test event queued for this endpoint'),
      ...problemResponses,
    },
  }),
  async (c) => c.json(await testWebhook(c.get('ctx'), c.get('principal'), c.req.valid('param').id), 202),
);

webhooksRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/webhooks/{id}/deliveries',
    tags,
    security: bearer,
    request: { params: IdParam, query: PaginationQuerySchema },
    responses: { 200: jsonResponse(WebhookDeliveryListSchema, 'Delivery log, newest first'), ...problemResponses },
  }),
  async (c) =>
    c.json(await listDeliveries(c.get('ctx'), c.get('principal'), c.req.valid('param').id, c.req.valid('query')), 200),
);

webhooksRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/webhooks/deliveries/{id}/replay',
    tags,
    security: bearer,
    request: { params: IdParam },
    responses: { 200: jsonResponse(WebhookDeliverySchema, 'The delivery, queued again now'), ...problemResponses },
  }),
  async (c) => c.json(await replayDelivery(c.get('ctx'), c.get('principal'), c.req.valid('param').id), 200),
);

webhooksRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/alerts',
    tags,
    security: bearer,
    responses: { 200: jsonResponse(AlertSettingsSchema, 'Alert settings of the org'), ...problemResponses },
  }),
  async (c) => c.json(await getAlertSettings(c.get('ctx'), c.get('principal')), 200),
);

webhooksRoutes.openapi(
  createRoute({
    method: 'patch',
    path: '/v1/alerts',
    tags,
    security: bearer,
    request: jsonBody(PatchAlertSettingsSchema),
    responses: { 200: jsonResponse(AlertSettingsSchema, 'The updated settings'), ...problemResponses },
  }),
  async (c) => c.json(await patchAlertSettings(c.get('ctx'), c.get('principal'), c.req.valid('json')), 200),
);
