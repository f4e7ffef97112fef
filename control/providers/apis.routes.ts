/** /v1/provider/apis: a provider's listing lifecycle (create/import, patch, credentials, pricing, verify, publish). `provider:write`. */
import { createRoute, z } from '@hono/zod-openapi';
import { newRouter, optionalJsonBody } from '../lib/http.js';
import { bearer, jsonBody, jsonResponse, okResponses, problemResponses } from '../lib/openapi.js';
import type { Principal } from '../auth/principal.js';
import { cancelPendingPricing, setPricing } from '../pricing/pricing.service.js';
import { listOwnedApis, ownedApiDetail } from './provider-apis.service.js';
import { iso } from './apis.serialize.js';
import { importedApiResponse, ownedEndpointsPage } from './imported-api.service.js';
import { createApi, patchApi, reimportApi, setCredentials } from './apis.service.js';
import { publishApi, unpublishApi, verifyApi } from './publish.service.js';
import type { AppContext } from '../context.js';
import { PaginationQuerySchema } from '../../core/schemas/common.schemas.js';
import {
  ApiCreateInputSchema,
  ApiImportInputSchema,
  ApiPatchInputSchema,
  CancelledPriceChangeSchema,
  CredentialsInputSchema,
  CredentialsResultSchema,
  PricingInputSchema,
  PublishInputSchema,
  ImportedApiSchema,
  PricingResultSchema,
  ProviderApiDetailSchema,
  ProviderApiListSchema,
  ProviderEndpointPageSchema,
  PublishResultSchema,
  ReimportResultSchema,
  VerifyResultSchema,
} from '../../core/schemas/providers.schemas.js';

export const apisRoutes = newRouter();

const ApiIdParam = z.object({
  api_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'api_id', in: 'path' } }),
});
const EndpointParam = ApiIdParam.extend({
  endpoint_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'endpoint_id', in: 'path' } }),
});

function detail(ctx: AppContext, caller: Principal | undefined, apiId: string) {
  return ownedApiDetail(ctx.db, caller, apiId);
}

const tags = ['provider'];

apisRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/apis',
    tags,
    security: bearer,
    request: jsonBody(ApiCreateInputSchema),
    responses: {
      201: jsonResponse(
        ImportedApiSchema,
        'The new draft listing: import_report, endpoint_count, the first 100 endpoints, endpoints_url for the rest',
      ),
      ...problemResponses,
    },
  }),
  async (c) => {
    const ctx = c.get('ctx');
    const { apiId, warnings } = await createApi(ctx, c.get('principal'), c.req.valid('json'));
    return c.json({ ...(await importedApiResponse(ctx.db, c.get('principal'), apiId)), warnings }, 201);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/apis/{api_id}/endpoints',
    tags,
    security: bearer,
    request: { params: ApiIdParam, query: PaginationQuerySchema },
    responses: okResponses(
      ProviderEndpointPageSchema,
      "The listing's current endpoints in document order, with prices (paged)",
    ),
  }),
  async (c) => {
    const { limit, offset } = c.req.valid('query');
    return c.json(
      await ownedEndpointsPage(c.get('ctx').db, c.get('principal'), c.req.valid('param').api_id, limit, offset),
      200,
    );
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/apis',
    tags,
    security: bearer,
    request: { query: PaginationQuerySchema },
    responses: okResponses(ProviderApiListSchema, 'Draft and live listings of the org, newest first (paged)'),
  }),
  async (c) => {
    const { limit, offset } = c.req.valid('query');
    return c.json(await listOwnedApis(c.get('ctx').db, c.get('principal'), limit, offset), 200);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/apis/{api_id}',
    tags,
    security: bearer,
    request: { params: ApiIdParam },
    responses: okResponses(ProviderApiDetailSchema, 'Listing detail with endpoints, prices and pending increases'),
  }),
  async (c) => {
    return c.json(await detail(c.get('ctx'), c.get('principal'), c.req.valid('param').api_id), 200);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'patch',
    path: '/v1/provider/apis/{api_id}',
    tags,
    security: bearer,
    request: { params: ApiIdParam, ...jsonBody(ApiPatchInputSchema) },
    responses: okResponses(ProviderApiDetailSchema, 'The updated listing'),
  }),
  async (c) => {
    const { api_id } = c.req.valid('param');
    await patchApi(c.get('ctx'), c.get('principal'), api_id, c.req.valid('json'));
    return c.json(await detail(c.get('ctx'), c.get('principal'), api_id), 200);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/apis/{api_id}/import',
    tags,
    security: bearer,
    request: { params: ApiIdParam, ...jsonBody(ApiImportInputSchema) },
    responses: okResponses(
      ReimportResultSchema,
      'Re-imported (answered like a create): endpoints matched by method+path keep their ids and prices',
    ),
  }),
  async (c) => {
    const { api_id } = c.req.valid('param');
    const r = await reimportApi(c.get('ctx'), c.get('principal'), api_id, c.req.valid('json'));
    return c.json(
      {
        ...(await importedApiResponse(c.get('ctx').db, c.get('principal'), api_id)),
        warnings: r.warnings,
        added: r.added,
        removed: r.removed,
      },
      200,
    );
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'put',
    path: '/v1/provider/apis/{api_id}/credentials',
    tags,
    security: bearer,
    request: { params: ApiIdParam, ...jsonBody(CredentialsInputSchema) },
    responses: okResponses(CredentialsResultSchema, 'Stored (encrypted); only a fingerprint is returned'),
  }),
  async (c) => {
    const { api_id } = c.req.valid('param');
    const credentials = await setCredentials(c.get('ctx'), c.get('principal'), api_id, c.req.valid('json'));
    return c.json({ api_id, credentials }, 200);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'put',
    path: '/v1/provider/apis/{api_id}/pricing',
    tags,
    security: bearer,
    request: { params: ApiIdParam, ...jsonBody(PricingInputSchema) },
    responses: okResponses(
      PricingResultSchema,
      'Per endpoint: applied, scheduled (increase on a listing that has been published) or unchanged',
    ),
  }),
  async (c) => {
    const { api_id } = c.req.valid('param');
    const out = await setPricing(c.get('ctx'), c.get('principal'), api_id, c.req.valid('json').endpoints);
    return c.json(
      {
        results: out.map((o) => ({ ...o, effective_at: iso(o.effective_at) })),
        api: await detail(c.get('ctx'), c.get('principal'), api_id),
      },
      200,
    );
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/v1/provider/apis/{api_id}/pricing/{endpoint_id}/pending',
    tags,
    security: bearer,
    request: { params: EndpointParam },
    responses: okResponses(CancelledPriceChangeSchema, 'The cancelled pending increase'),
  }),
  async (c) => {
    const { api_id, endpoint_id } = c.req.valid('param');
    const pc = await cancelPendingPricing(c.get('ctx'), c.get('principal'), api_id, endpoint_id);
    return c.json(
      {
        change_id: pc.id,
        endpoint_id,
        status: pc.status,
        new_price_cents: pc.new_price_cents,
        effective_at: iso(pc.effective_at),
        cancelled_at: iso(pc.cancelled_at),
      },
      200,
    );
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/apis/{api_id}/verify',
    tags,
    security: bearer,
    request: { params: ApiIdParam },
    responses: okResponses(VerifyResultSchema, 'Smoke test result per checked endpoint'),
  }),
  async (c) => {
    return c.json({ ...(await verifyApi(c.get('ctx'), c.get('principal'), c.req.valid('param').api_id)) }, 200);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/apis/{api_id}/publish',
    tags,
    security: bearer,
    request: {
      params: ApiIdParam,
      body: { content: { 'application/json': { schema: PublishInputSchema } }, required: false },
    },
    responses: okResponses(PublishResultSchema, 'Now live'),
  }),
  async (c) => {
    const { api_id } = c.req.valid('param');
    const opts = await optionalJsonBody(c, PublishInputSchema);
    const r = await publishApi(c.get('ctx'), c.get('principal'), api_id, opts);
    return c.json({ ...(await detail(c.get('ctx'), c.get('principal'), api_id)), verify: r.verify }, 200);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/apis/{api_id}/unpublish',
    tags,
    security: bearer,
    request: { params: ApiIdParam },
    responses: okResponses(ProviderApiDetailSchema, 'Back to draft'),
  }),
  async (c) => {
    const { api_id } = c.req.valid('param');
    await unpublishApi(c.get('ctx'), c.get('principal'), api_id);
    return c.json(await detail(c.get('ctx'), c.get('principal'), api_id), 200);
  },
);
