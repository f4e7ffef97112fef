/** Provider tools (provider:write): import, price, verify and publish an API; payouts onboarding and analytics. */
import { z } from 'zod';
import { answer, defineTool, READ, rest, seg, WRITE } from '../tool-kit.js';
import {
  ApiImportInputSchema,
  ApiPatchInputSchema,
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
    description: 'Your draft and live APIs. Next: provider_get_api for one.',
    input: z.object({}),
    output: ProviderApiListSchema,
    annotations: READ,
    scope: P,
    run: async (_a, env) => answer('provider_list_apis', env, await rest(env, 'GET', '/v1/provider/apis')),
  }),
  defineTool({
    name: 'provider_get_api',
    title: 'My API in detail',
    description: 'One of your APIs: metadata, endpoints with prices and discounts, pending price increases, state.',
    input: z.object({ api_id: ApiId }),
    output: ProviderApiDetailSchema,
    annotations: READ,
    scope: P,
    run: async (a, env) =>
      answer('provider_get_api', env, await rest(env, 'GET', `/v1/provider/apis/${seg(a.api_id)}`)),
  }),
  defineTool({
    name: 'provider_create_api',
    title: 'Create / import an API',
    description:
      'Creates a draft listing from an OpenAPI document: `openapi_url`, a marketplace export `rapidapi_url`, or the document itself as `body`. Next: provider_set_credentials, provider_set_pricing, provider_verify, provider_publish.',
    input: ApiImportInputSchema,
    output: ProviderApiDetailSchema,
    annotations: { ...WRITE, openWorldHint: true },
    scope: P,
    run: async (a, env) =>
      answer('provider_create_api', env, await rest(env, 'POST', '/v1/provider/apis', { body: a })),
  }),
  defineTool({
    name: 'provider_update_api',
    title: 'Edit listing metadata',
    description:
      'Changes name, slug, summary, description, category, tags, base_url, docs_url, logo_url or health_path.',
    input: ApiPatchInputSchema.extend({ api_id: ApiId }),
    output: ProviderApiDetailSchema,
    annotations: { ...WRITE, idempotentHint: true },
    scope: P,
    run: async ({ api_id, ...patch }, env) =>
      answer('provider_update_api', env, await rest(env, 'PATCH', `/v1/provider/apis/${seg(api_id)}`, { body: patch })),
  }),
  defineTool({
    name: 'provider_set_credentials',
    title: 'Store the upstream secret',
    description:
      'Stores the secret the gateway injects into calls to your upstream (encrypted at rest, never shown again). `injection` bearer (default: Authorization: Bearer <secret>); header or query injection needs a parameter name, which only REST (`injection_name`) and the CLI (`--injection-name`) take.',
    // The spec's table has no injection_name, so header/query injection (which needs one) is REST/CLI-only.
    input: CredentialsInputSchema.omit({ injection_name: true }).extend({ api_id: ApiId }),
    output: CredentialsResultSchema,
    annotations: { ...WRITE, idempotentHint: true },
    scope: P,
    run: async ({ api_id, ...body }, env) =>
      answer(
        'provider_set_credentials',
        env,
        await rest(env, 'PUT', `/v1/provider/apis/${seg(api_id)}/credentials`, { body }),
      ),
  }),
  defineTool({
    name: 'provider_set_pricing',
    title: 'Set prices',
    description:
      'Sets per-endpoint prices in cents (0 = free) and volume discounts. A price increase on a live listing is scheduled after the notice period (cancel with provider_cancel_pending_pricing).',
    input: PricingInputSchema.extend({ api_id: ApiId }),
    output: PricingResultSchema,
    annotations: { ...WRITE, idempotentHint: true },
    scope: P,
    run: async ({ api_id, endpoints }, env) =>
      answer(
        'provider_set_pricing',
        env,
        await rest(env, 'PUT', `/v1/provider/apis/${seg(api_id)}/pricing`, { body: { endpoints } }),
      ),
  }),
  defineTool({
    name: 'provider_verify',
    title: 'Smoke-test the upstream',
    description:
      'Calls your upstream (parameterless GET endpoints or health_path) with the stored secret and reports each check.',
    input: z.object({ api_id: ApiId }),
    output: VerifyResultSchema,
    annotations: { ...WRITE, openWorldHint: true },
    scope: P,
    run: async (a, env) =>
      answer('provider_verify', env, await rest(env, 'POST', `/v1/provider/apis/${seg(a.api_id)}/verify`)),
  }),
  defineTool({
    name: 'provider_publish',
    title: 'Publish (draft → live)',
    description:
      'Makes the listing live in the catalog. `accept_terms: true` is required (the marketplace provider terms); verification runs first unless `skip_verify`.',
    input: PublishInputSchema.extend({ api_id: ApiId }),
    output: PublishResultSchema,
    annotations: { ...WRITE, idempotentHint: true, openWorldHint: true },
    scope: P,
    run: async ({ api_id, ...body }, env) =>
      answer('provider_publish', env, await rest(env, 'POST', `/v1/provider/apis/${seg(api_id)}/publish`, { body })),
  }),
  defineTool({
    name: 'provider_unpublish',
    title: 'Unpublish (live → draft)',
    description:
      'Takes the listing out of the catalog; calls to it are refused from then on. Publish again to restore.',
    input: z.object({ api_id: ApiId }),
    output: ProviderApiDetailSchema,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    scope: P,
    run: async (a, env) =>
      answer('provider_unpublish', env, await rest(env, 'POST', `/v1/provider/apis/${seg(a.api_id)}/unpublish`)),
  }),
  defineTool({
    name: 'provider_cancel_pending_pricing',
    title: 'Cancel a scheduled price increase',
    description: "Cancels an endpoint's scheduled price increase; the current price stays.",
    input: z.object({ api_id: ApiId, endpoint_id: z.string().min(1).max(64) }),
    output: CancelledPriceChangeSchema,
    annotations: { ...WRITE, idempotentHint: true },
    scope: P,
    run: async (a, env) =>
      answer(
        'provider_cancel_pending_pricing',
        env,
        await rest(env, 'DELETE', `/v1/provider/apis/${seg(a.api_id)}/pricing/${seg(a.endpoint_id)}/pending`),
      ),
  }),
  defineTool({
    name: 'provider_analytics',
    title: 'Provider analytics',
    description: 'Gross volume, calls, platform fees, net earnings and payouts of your APIs.',
    input: z.object({}),
    output: ProviderAnalyticsSchema,
    annotations: READ,
    scope: P,
    run: async (_a, env) => answer('provider_analytics', env, await rest(env, 'GET', '/v1/provider/analytics')),
  }),
  defineTool({
    name: 'provider_connect_onboard',
    title: 'Payout onboarding',
    description: `Returns the connected-account onboarding URL for payouts. ${HUMAN}`,
    input: z.object({}),
    output: z.looseObject({ onboarding_url: z.string(), human_action_required: z.literal(true) }),
    annotations: { ...WRITE, idempotentHint: true },
    scope: P,
    run: async (_a, env) =>
      answer(
        'provider_connect_onboard',
        env,
        await rest(env, 'POST', '/v1/provider/connect'),
        (b) => ({ ...b, human_action_required: true }),
        HUMAN,
      ),
  }),
];
