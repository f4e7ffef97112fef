/**
 * Catalog operations' input and output (discover, catalog requests), shared by the REST routes, the services, MCP
 * tools and the CLI. Plain zod: importing this registers nothing. Other catalog views move here as they are typed.
 */
import { z } from 'zod';

export const DiscoverInputSchema = z.object({
  query: z.string().min(1).max(200),
  category: z.string().max(40).optional(),
  max_results: z.coerce.number().int().min(1).max(50).default(10),
});
export type DiscoverInput = z.infer<typeof DiscoverInputSchema>;

export const DiscoverEndpointSchema = z.object({
  method: z.string(),
  path: z.string(),
  summary: z.string(),
  price_cents: z.number().int(),
});

export const DiscoverResultSchema = z
  .object({
    query: z.string(),
    results: z.array(
      z.object({
        slug: z.string(),
        name: z.string(),
        summary: z.string(),
        category: z.string(),
        min_price_cents: z.number().int().nullable(),
        endpoints: z.array(DiscoverEndpointSchema).meta({ description: 'Up to 10 callable endpoints, in order' }),
      }),
    ),
  })
  .meta({ id: 'DiscoverResult' });
export type DiscoverResult = z.infer<typeof DiscoverResultSchema>;

export const CatalogRequestInputSchema = z
  .object({
    query: z.string().trim().min(2).max(500),
    email: z.string().email().max(254).optional(),
    notes: z.string().max(2000).optional(),
  })
  .strict();
export type CatalogRequestInput = z.infer<typeof CatalogRequestInputSchema>;

export const CatalogRequestSchema = z
  .object({
    // Not `request_id`: that name means the X-Svc-Request-Id of a call everywhere else.
    catalog_request_id: z.string(),
    query: z.string(),
    email: z.string().nullable(),
    notes: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'CatalogRequest' });
export type CatalogRequest = z.infer<typeof CatalogRequestSchema>;
