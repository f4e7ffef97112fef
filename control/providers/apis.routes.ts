/** /v1/provider/apis: a provider's listing lifecycle (create/import, patch, credentials, pricing, verify, publish). `provider:write`. */
import { createRoute, z } from '@hono/zod-openapi';
import { newRouter, optionalJsonBody } from '../lib/http.js';
import { bearer, centsField, jsonBody, jsonResponse, okResponses, problemResponses } from '../lib/openapi.js';
import { requireScope } from '../auth/rest-auth.js';
import { takeImport } from '../auth/abuse-limits.js';
import { DiscountTiersSchema } from '../../core/discounts.js';
import { cancelPendingPricing, setPricing } from '../pricing/pricing.service.js';
import { getOwnedApi } from './apis.repo.js';
import { listOwnedApis, ownedApiDetail } from './provider-apis.service.js';
import { iso, toProviderApi } from './apis.serialize.js';
import { importedApiResponse, ownedEndpointsPage } from './imported-api.service.js';
import { createApi, patchApi, reimportApi, setCredentials } from './apis.service.js';
import { publishApi, unpublishApi, verifyApi } from './publish.service.js';
import type { AppContext } from '../context.js';
import { linkUrlSchema } from '../../core/link-url.js';
import { PaginationQuery } from '../lib/pagination.js';
import { CREDENTIAL_INJECTIONS } from '../../core/enumerations.js';
import {
  CancelledPriceChangeSchema,
  CredentialsResultSchema,
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

const url = z.string().url().max(2000);
const Source = {
  openapi_url: url
    .optional()
    .openapi({ description: 'URL of an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML)' }),
  rapidapi_url: url.optional().openapi({ description: 'URL of a marketplace OpenAPI export (docs/providers.md)' }),
  body: z
    .union([z.string().max(2 * 1024 * 1024), z.record(z.string(), z.unknown())])
    .optional()
    .openapi({ description: 'The OpenAPI document itself (object, or JSON/YAML text)' }),
};
const Metadata = {
  name: z.string().trim().min(1).max(200).optional(),
  slug: z.string().min(3).max(60).optional(),
  summary: z.string().max(280).optional(),
  description: z.string().max(10_000).optional(),
  category: z.string().min(1).max(40).optional(),
  tags: z.array(z.string().min(1).max(40)).max(20).optional(),
  base_url: url.nullable().optional().openapi({ description: 'Upstream base URL; endpoint paths are relative to it' }),
  docs_url: linkUrlSchema(2000).nullable().optional(),
  logo_url: linkUrlSchema(2000).nullable().optional(),
  health_path: z
    .string()
    .startsWith('/')
    .max(500)
    .nullable()
    .optional()
    .openapi({ description: 'GET path verify calls instead of the parameterless GET endpoints' }),
};
const CreateBody = z.object({ ...Source, ...Metadata }).strict();
const PatchBody = z.object(Metadata).strict();
const ImportBody = z.object(Source).strict();
const CredentialsBody = z
  .object({
    secret: z.string().min(1).max(4096),
    injection: z
      .enum(CREDENTIAL_INJECTIONS)
      .optional()
      .openapi({ description: 'Default bearer (Authorization: Bearer <secret>)' }),
    injection_name: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,100}$/)
      .optional()
      .openapi({ description: 'Header or query parameter name for header/query injection' }),
  })
  .strict();
const PricingBody = z
  .object({
    endpoints: z
      .array(
        z
          .object({
            endpoint_id: z.string().min(1),
            price_cents: centsField,
            discounts: DiscountTiersSchema.optional(),
          })
          .strict(),
      )
      .min(1)
      .max(500),
  })
  .strict();
const PublishBody = z.object({ accept_terms: z.boolean().optional(), skip_verify: z.boolean().optional() }).strict();

function detail(ctx: AppContext, orgId: string, apiId: string) {
  return ownedApiDetail(ctx.db, orgId, apiId);
}

const tags = ['provider'];

apisRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/apis',
    tags,
    security: bearer,
    request: jsonBody(CreateBody),
    responses: {
      201: jsonResponse(
        ImportedApiSchema,
        'The new draft listing: import_report, endpoint_count, the first 100 endpoints, endpoints_url for the rest',
      ),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    const ctx = c.get('ctx');
    takeImport(ctx, p.orgId);
    const { apiId, warnings } = await createApi(ctx, p.orgId, c.req.valid('json'));
    return c.json({ ...(await importedApiResponse(ctx.db, p.orgId, apiId)), warnings }, 201);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/apis/{api_id}/endpoints',
    tags,
    security: bearer,
    request: { params: ApiIdParam, query: PaginationQuery },
    responses: okResponses(
      ProviderEndpointPageSchema,
      "The listing's current endpoints in document order, with prices (paged)",
    ),
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    const { limit, offset } = c.req.valid('query');
    return c.json(await ownedEndpointsPage(c.get('ctx').db, p.orgId, c.req.valid('param').api_id, limit, offset), 200);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/apis',
    tags,
    security: bearer,
    request: { query: PaginationQuery },
    responses: okResponses(ProviderApiListSchema, 'Draft and live listings of the org, newest first (paged)'),
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    const { limit, offset } = c.req.valid('query');
    return c.json(await listOwnedApis(c.get('ctx').db, p.orgId, limit, offset), 200);
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
    const p = requireScope(c, 'provider:write');
    return c.json(await detail(c.get('ctx'), p.orgId, c.req.valid('param').api_id), 200);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'patch',
    path: '/v1/provider/apis/{api_id}',
    tags,
    security: bearer,
    request: { params: ApiIdParam, ...jsonBody(PatchBody) },
    responses: okResponses(ProviderApiDetailSchema, 'The updated listing'),
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    const { api_id } = c.req.valid('param');
    await patchApi(c.get('ctx'), p.orgId, api_id, c.req.valid('json'));
    return c.json(await detail(c.get('ctx'), p.orgId, api_id), 200);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/apis/{api_id}/import',
    tags,
    security: bearer,
    request: { params: ApiIdParam, ...jsonBody(ImportBody) },
    responses: okResponses(
      ReimportResultSchema,
      'Re-imported (answered like a create): endpoints matched by method+path keep their ids and prices',
    ),
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    const { api_id } = c.req.valid('param');
    takeImport(c.get('ctx'), p.orgId);
    const r = await reimportApi(c.get('ctx'), p.orgId, api_id, c.req.valid('json'));
    return c.json(
      {
        ...(await importedApiResponse(c.get('ctx').db, p.orgId, api_id)),
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
    request: { params: ApiIdParam, ...jsonBody(CredentialsBody) },
    responses: okResponses(CredentialsResultSchema, 'Stored (encrypted); only a fingerprint is returned'),
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    const { api_id } = c.req.valid('param');
    await setCredentials(c.get('ctx'), p.orgId, api_id, c.req.valid('json'));
    const api = toProviderApi(await getOwnedApi(c.get('ctx').db, p.orgId, api_id));
    return c.json({ api_id, credentials: api.credentials }, 200);
  },
);

apisRoutes.openapi(
  createRoute({
    method: 'put',
    path: '/v1/provider/apis/{api_id}/pricing',
    tags,
    security: bearer,
    request: { params: ApiIdParam, ...jsonBody(PricingBody) },
    responses: okResponses(
      PricingResultSchema,
      'Per endpoint: applied, scheduled (increase on a listing that has been published) or unchanged',
    ),
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    const { api_id } = c.req.valid('param');
    const out = await setPricing(c.get('ctx'), p.orgId, api_id, c.req.valid('json').endpoints);
    return c.json(
      {
        results: out.map((o) => ({ ...o, effective_at: iso(o.effective_at) })),
        api: await detail(c.get('ctx'), p.orgId, api_id),
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
    const p = requireScope(c, 'provider:write');
    const { api_id, endpoint_id } = c.req.valid('param');
    const pc = await cancelPendingPricing(c.get('ctx'), p.orgId, api_id, endpoint_id);
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
    const p = requireScope(c, 'provider:write');
    return c.json({ ...(await verifyApi(c.get('ctx'), p.orgId, c.req.valid('param').api_id)) }, 200);
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
      body: { content: { 'application/json': { schema: PublishBody } }, required: false },
    },
    responses: okResponses(PublishResultSchema, 'Now live'),
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    const { api_id } = c.req.valid('param');
    const opts = await optionalJsonBody(c, PublishBody);
    const r = await publishApi(c.get('ctx'), p.orgId, api_id, opts);
    return c.json({ ...(await detail(c.get('ctx'), p.orgId, api_id)), verify: r.verify }, 200);
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
    const p = requireScope(c, 'provider:write');
    const { api_id } = c.req.valid('param');
    await unpublishApi(c.get('ctx'), p.orgId, api_id);
    return c.json(await detail(c.get('ctx'), p.orgId, api_id), 200);
  },
);
