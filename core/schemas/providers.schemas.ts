/**
 * Provider side: the public directory and profile pages, a provider's own profile and analytics, and its listings
 * as it sees them (drafts included; secrets never, only a fingerprint). Output shapes of control/providers/*;
 * shared by the REST routes, the services, MCP tools and the CLI. Plain zod: importing this registers nothing.
 */
import { z } from 'zod';
import { DiscountTiersSchema } from '../discounts.js';
import { CREDENTIAL_INJECTIONS } from '../enumerations.js';
import { linkUrlSchema } from '../link-url.js';
import { EndpointBase, ListingFacts, ListingSummarySchema, PendingPriceSchema } from './catalog.schemas.js';
import { CentsAmount, PageOf, Timestamp } from './common.schemas.js';

/** PATCH /v1/provider/profile and the update_my_profile tool: only the fields sent change; null clears. */
export const ProfileUpdateInputSchema = z
  .object({
    slug: z.string().min(3).max(60).optional(),
    display_name: z.string().trim().min(1).max(100).optional(),
    bio: z.string().max(2000).nullable().optional(),
    website: linkUrlSchema(500).nullable().optional(),
    logo_url: linkUrlSchema(500).nullable().optional(),
  })
  .strict();
export type ProfileUpdateInput = z.infer<typeof ProfileUpdateInputSchema>;

export const ProviderProfileSchema = z
  .object({
    slug: z.string(),
    display_name: z.string(),
    bio: z.string().nullable(),
    website: z.string().nullable(),
    logo_url: z.string().nullable(),
    live_listings: z.number().int().optional().meta({ description: 'In the directory and on profile pages' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'ProviderProfile' });
export type ProviderProfile = z.infer<typeof ProviderProfileSchema>;

export const ProviderDirectorySchema = PageOf(ProviderProfileSchema).meta({ id: 'ProviderDirectory' });
export type ProviderDirectory = z.infer<typeof ProviderDirectorySchema>;

export const ProviderPageSchema = ProviderProfileSchema.extend({ listings: z.array(ListingSummarySchema) }).meta({
  id: 'ProviderPage',
});
export type ProviderPage = z.infer<typeof ProviderPageSchema>;

const CallCounts = { calls: z.number().int(), ok_calls: z.number().int(), gross_cents: CentsAmount };

export const ProviderAnalyticsSchema = z
  .object({
    from: Timestamp,
    to: Timestamp,
    calls: z.number().int(),
    ok_calls: z.number().int(),
    distinct_consumers: z.number().int(),
    gross_volume_cents: CentsAmount,
    earnings: z.object({
      gross_cents: CentsAmount,
      platform_fee_cents: CentsAmount,
      net_cents: CentsAmount,
      reversals_cents: CentsAmount,
    }),
    payouts: z.object({
      pending_cents: CentsAmount,
      paid_cents: CentsAmount,
      failed_cents: CentsAmount,
      unpaid_balance_cents: CentsAmount.meta({
        description: 'Net earned over all time minus payouts recorded in the earnings ledger',
      }),
    }),
    listings: z.array(
      z.object({
        api_id: z.string(),
        slug: z.string(),
        ...CallCounts,
        fee_cents: CentsAmount,
        net_cents: CentsAmount,
        endpoints: z.array(z.object({ endpoint_id: z.string(), method: z.string(), path: z.string(), ...CallCounts })),
      }),
    ),
  })
  .meta({ id: 'ProviderAnalytics' });
export type ProviderAnalytics = z.infer<typeof ProviderAnalyticsSchema>;

/** What the last import found (control/catalog/openapi-import.ts `ImportReport`). */
export const ImportReportSchema = z
  .object({
    operations_found: z.number().int(),
    endpoints_imported: z.number().int(),
    skipped_operations: z.number().int(),
    schema_components: z.number().int(),
    truncated_schemas: z.number().int(),
    base_url_candidates: z.array(z.string()),
    warnings: z.array(z.string()),
  })
  .meta({ id: 'ImportReport' });
export type ImportReport = z.infer<typeof ImportReportSchema>;

export const ProviderCredentialsSchema = z.object({
  set: z.boolean(),
  fingerprint: z.string().nullable().meta({ description: 'Identifies the stored secret; the secret never leaves' }),
  injection: z.enum(['none', ...CREDENTIAL_INJECTIONS]),
  injection_name: z.string().nullable(),
});

export const ProviderApiSchema = z
  .object({
    api_id: z.string(),
    ...ListingFacts,
    base_url: z.string().nullable(),
    health_path: z.string().nullable(),
    suspended: z.boolean(),
    source: z.object({ kind: z.enum(['openapi_url', 'rapidapi_url', 'body', 'demo']), url: z.string().nullable() }),
    import_report: ImportReportSchema.nullable().meta({ description: 'null for listings not imported' }),
    credentials: ProviderCredentialsSchema,
    published_at: Timestamp.nullable(),
    last_verified_at: Timestamp.nullable(),
    last_verify_ok: z.boolean().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'ProviderApi' });
export type ProviderApi = z.infer<typeof ProviderApiSchema>;

export const ProviderEndpointSchema = z
  .object({
    ...EndpointBase,
    operation_id: z.string().nullable(),
    discounts: DiscountTiersSchema,
    pending_price: PendingPriceSchema.nullable(),
    removed: z.boolean().meta({ description: 'Gone from the last import; kept so usage history resolves' }),
  })
  .meta({ id: 'ProviderEndpoint' });
export type ProviderEndpoint = z.infer<typeof ProviderEndpointSchema>;

export const ProviderApiDetailSchema = ProviderApiSchema.extend({ endpoints: z.array(ProviderEndpointSchema) }).meta({
  id: 'ProviderApiDetail',
});
export type ProviderApiDetail = z.infer<typeof ProviderApiDetailSchema>;

export const ProviderApiListSchema = PageOf(ProviderApiSchema.extend({ endpoint_count: z.number().int() })).meta({
  id: 'ProviderApiList',
});
export type ProviderApiList = z.infer<typeof ProviderApiListSchema>;

export const ProviderEndpointPageSchema = PageOf(ProviderEndpointSchema).meta({ id: 'ProviderEndpointPage' });
export type ProviderEndpointPage = z.infer<typeof ProviderEndpointPageSchema>;

/** What an import (create) answers: one page of endpoints, never all of them (docs/providers.md, Import). */
export const ImportedApiSchema = ProviderApiSchema.extend({
  endpoint_count: z.number().int(),
  endpoints: z.array(ProviderEndpointSchema).describe('The first 100 current endpoints, in document order'),
  endpoints_has_more: z.boolean(),
  endpoints_url: z.string().describe('The paged list of every endpoint (limit, offset)'),
  warnings: z.array(z.string()),
}).meta({ id: 'ImportedApi' });
export type ImportedApi = z.infer<typeof ImportedApiSchema>;

export const ReimportResultSchema = ImportedApiSchema.extend({
  added: z.number().int(),
  removed: z.number().int(),
}).meta({ id: 'ReimportResult' });
export type ReimportResult = z.infer<typeof ReimportResultSchema>;

export const CredentialsResultSchema = z
  .object({ api_id: z.string(), credentials: ProviderCredentialsSchema })
  .meta({ id: 'CredentialsResult' });
export type CredentialsResult = z.infer<typeof CredentialsResultSchema>;

export const PriceOutcomeSchema = z.object({
  endpoint_id: z.string(),
  outcome: z.enum(['applied', 'scheduled', 'unchanged']).meta({
    description: 'scheduled: an increase on a listing that has been published, effective after the notice period',
  }),
  price_cents: z.number().int(),
  effective_at: Timestamp,
});

export const PricingResultSchema = z
  .object({ results: z.array(PriceOutcomeSchema), api: ProviderApiDetailSchema })
  .meta({ id: 'PricingResult' });
export type PricingResult = z.infer<typeof PricingResultSchema>;

export const CancelledPriceChangeSchema = z
  .object({
    change_id: z.string(),
    endpoint_id: z.string(),
    status: z.literal('cancelled'),
    new_price_cents: z.number().int(),
    effective_at: Timestamp,
    cancelled_at: Timestamp,
  })
  .meta({ id: 'CancelledPriceChange' });
export type CancelledPriceChange = z.infer<typeof CancelledPriceChangeSchema>;

export const VerifyResultSchema = z
  .object({
    verification_id: z.string(),
    ok: z.boolean(),
    checks: z.array(
      z.object({
        endpoint_id: z.string().nullable(),
        method: z.string(),
        path: z.string(),
        status: z.number().int().nullable(),
        latency_ms: z.number().int().nullable(),
        ok: z.boolean(),
        error: z.string().nullable(),
      }),
    ),
    detail: z.string(),
  })
  .meta({ id: 'VerifyResult' });
export type VerifyResult = z.infer<typeof VerifyResultSchema>;

export const PublishResultSchema = ProviderApiDetailSchema.extend({
  verify: VerifyResultSchema.nullable().meta({ description: 'null when published with skip_verify' }),
}).meta({ id: 'PublishResult' });
export type PublishResult = z.infer<typeof PublishResultSchema>;
