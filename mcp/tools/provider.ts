/** Provider tools (provider:write): import, price, verify and publish an API; payouts onboarding and analytics. */
import { z } from 'zod';
import { defineTool, noted, READ, WRITE } from '../tool-kit.js';
import { DAY_MS } from '../../core/clock.js';
import { SvcError } from '../../core/errors.js';
import { cancelPendingPricing, setPricing } from '../../control/pricing/pricing.service.js';
import { listOwnedApis, ownedApiDetail } from '../../control/providers/provider-apis.service.js';
import { iso } from '../../control/providers/apis.serialize.js';
import { importedApiResponse } from '../../control/providers/imported-api.service.js';
import { createApi, patchApi, setCredentials } from '../../control/providers/apis.service.js';
import { publishApi, unpublishApi, verifyApi } from '../../control/providers/publish.service.js';
import { providerAnalytics } from '../../control/providers/analytics.service.js';
import { connectOnboard, toConnectResource } from '../../control/billing/connect.service.js';
import { PAGE_DEFAULT_LIMIT } from '../../core/schemas/common.schemas.js';
import {
  ApiImportInputSchema,
  ApiPatchInputSchema,
  ImportedApiSchema,
  CancelledPriceChangeSchema,
  CredentialsInputSchema,
  CredentialsResultSchema,
  PricingInputSchema,
  PublishInputSchema,
  PricingResultSchema,
  ProviderAnalyticsSchema,
  ProviderApiDetailSchema,
  ProviderApiListSchema,
  PublishResultSchema,
  VerifyResultSchema,
} from '../../core/schemas/providers.schemas.js';

const ApiId = z.string().min(1).max(64).describe('Your API id (api_…), from provider_list_apis');
const P = 'provider:write' as const;
const HUMAN = 'A person must open this URL in a browser to finish identity verification; payouts start after that.';

export const providerTools = [
  defineTool({
    name: 'provider_list_apis',
    title: 'My APIs',
    description: 'Your draft and live APIs. Free. Next: provider_get_api.',
    input: z.object({}),
    output: ProviderApiListSchema,
    annotations: READ,
    scope: P,
    run: async (_a, env) => listOwnedApis(env.ctx.db, env.caller.principal, PAGE_DEFAULT_LIMIT, 0),
  }),
  defineTool({
    name: 'provider_get_api',
    title: 'My API in detail',
    description: 'One of your APIs: metadata, endpoints, prices, discounts, pending increases, state. Free.',
    input: z.object({ api_id: ApiId }),
    output: ProviderApiDetailSchema,
    annotations: READ,
    scope: P,
    run: async (a, env) => ownedApiDetail(env.ctx.db, env.caller.principal, a.api_id),
  }),
  defineTool({
    name: 'provider_create_api',
    title: 'Create / import an API',
    description:
      'A draft listing from an OpenAPI document (`openapi_url`, `rapidapi_url` or `body`). Free. Next: provider_set_credentials, provider_set_pricing, provider_publish.',
    input: ApiImportInputSchema,
    output: ImportedApiSchema,
    annotations: { ...WRITE, openWorldHint: true },
    scope: P,
    run: async (a, env) => {
      const p = env.caller.principal;
      const { apiId, warnings } = await createApi(env.ctx, p, a);
      return { ...(await importedApiResponse(env.ctx.db, p, apiId)), warnings };
    },
  }),
  defineTool({
    name: 'provider_update_api',
    title: 'Edit listing metadata',
    description: 'Edits listing metadata: name, slug, summary, description, category, tags, URLs, health_path. Free.',
    input: ApiPatchInputSchema.extend({ api_id: ApiId }),
    output: ProviderApiDetailSchema,
    annotations: { ...WRITE, idempotentHint: true },
    scope: P,
    run: async ({ api_id, ...patch }, env) => {
      const p = env.caller.principal;
      await patchApi(env.ctx, p, api_id, patch);
      return ownedApiDetail(env.ctx.db, p, api_id);
    },
  }),
  defineTool({
    name: 'provider_set_credentials',
    title: 'Store the upstream secret',
    description:
      'Stores the upstream secret (encrypted, never shown again). `injection`: bearer (default), or header or query named by `injection_name`. Free. Next: provider_verify.',
    input: CredentialsInputSchema.extend({ api_id: ApiId }),
    output: CredentialsResultSchema,
    annotations: { ...WRITE, idempotentHint: true },
    scope: P,
    run: async ({ api_id, ...body }, env) => ({
      api_id,
      credentials: await setCredentials(env.ctx, env.caller.principal, api_id, body),
    }),
  }),
  defineTool({
    name: 'provider_set_pricing',
    title: 'Set prices',
    description:
      'Sets endpoint prices in cents (0 = free) and volume discounts; an increase on a live listing waits out the notice period. Free. Next: provider_publish.',
    input: PricingInputSchema.extend({ api_id: ApiId }),
    output: PricingResultSchema,
    annotations: { ...WRITE, idempotentHint: true },
    scope: P,
    run: async ({ api_id, endpoints }, env) => {
      const p = env.caller.principal;
      const out = await setPricing(env.ctx, p, api_id, endpoints);
      return {
        results: out.map((o) => ({ ...o, effective_at: iso(o.effective_at) })),
        api: await ownedApiDetail(env.ctx.db, p, api_id),
      };
    },
  }),
  defineTool({
    name: 'provider_verify',
    title: 'Smoke-test the upstream',
    description:
      'Calls your upstream with the stored secret (parameterless GETs or health_path) and reports each check. Free.',
    input: z.object({ api_id: ApiId }),
    output: VerifyResultSchema,
    annotations: { ...WRITE, openWorldHint: true },
    scope: P,
    run: async (a, env) => verifyApi(env.ctx, env.caller.principal, a.api_id),
  }),
  defineTool({
    name: 'provider_publish',
    title: 'Publish (draft → live)',
    description: 'Makes the listing live; needs `accept_terms: true`; verifies first unless `skip_verify`. Free.',
    input: PublishInputSchema.extend({ api_id: ApiId }),
    output: PublishResultSchema,
    annotations: { ...WRITE, idempotentHint: true, openWorldHint: true },
    scope: P,
    run: async ({ api_id, ...body }, env) => {
      const p = env.caller.principal;
      const r = await publishApi(env.ctx, p, api_id, body);
      return { ...(await ownedApiDetail(env.ctx.db, p, api_id)), verify: r.verify };
    },
  }),
  defineTool({
    name: 'provider_unpublish',
    title: 'Unpublish (live → draft)',
    description: 'Takes the listing out of the catalog; calls are refused until it is published again. Free.',
    input: z.object({ api_id: ApiId }),
    output: ProviderApiDetailSchema,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    scope: P,
    run: async (a, env) => {
      const p = env.caller.principal;
      await unpublishApi(env.ctx, p, a.api_id);
      return ownedApiDetail(env.ctx.db, p, a.api_id);
    },
  }),
  defineTool({
    name: 'provider_cancel_pending_pricing',
    title: 'Cancel a scheduled price increase',
    description: "Cancels an endpoint's scheduled price increase; the current price stays. Free.",
    input: z.object({ api_id: ApiId, endpoint_id: z.string().min(1).max(64) }),
    output: CancelledPriceChangeSchema,
    annotations: { ...WRITE, idempotentHint: true },
    scope: P,
    run: async (a, env) => {
      const pc = await cancelPendingPricing(env.ctx, env.caller.principal, a.api_id, a.endpoint_id);
      return {
        change_id: pc.id,
        endpoint_id: a.endpoint_id,
        status: pc.status,
        new_price_cents: pc.new_price_cents,
        effective_at: iso(pc.effective_at),
        cancelled_at: iso(pc.cancelled_at),
      };
    },
  }),
  defineTool({
    name: 'provider_analytics',
    title: 'Provider analytics',
    description: 'Gross volume, calls, fees, net earnings and payouts of your APIs, last 30 days. Free.',
    input: z.object({}),
    output: ProviderAnalyticsSchema,
    annotations: READ,
    scope: P,
    run: async (_a, env) => {
      const to = env.ctx.clock.now();
      return providerAnalytics(env.ctx.db, env.caller.principal, to - 30 * DAY_MS, to);
    },
  }),
  defineTool({
    name: 'provider_connect_onboard',
    title: 'Payout onboarding',
    description: 'A payout onboarding URL: a person verifies their identity there, then payouts start. Free.',
    input: z.object({}),
    output: z.looseObject({ onboarding_url: z.string(), human_action_required: z.literal(true) }),
    annotations: { ...WRITE, idempotentHint: true },
    scope: P,
    run: async (_a, env) => {
      const r = await connectOnboard(env.ctx, env.caller.principal, env.config.urls.control.replace(/\/+$/, ''));
      const account = toConnectResource(r.account);
      if (!account) throw new SvcError('internal', 'The connected account was not stored');
      return noted({ onboarding_url: r.url, created: r.created, account, human_action_required: true as const }, HUMAN);
    },
  }),
];
