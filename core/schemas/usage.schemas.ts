/**
 * GET /v1/usage: a consumer org's usage over [from, to) (control/usage/usage.service.ts builds it). Shared by the
 * REST route, the service, MCP tools and the CLI. Plain zod: importing this registers nothing.
 */
import { z } from 'zod';
import { CentsAmount, PageOf, Timestamp } from './common.schemas.js';

const Counts = { calls: z.number().int(), charged_cents: CentsAmount };

export const UsageEventSchema = z
  .object({
    id: z.string(),
    request_id: z.string().meta({ description: 'The gateway request id (X-Svc-Request-Id); same as id' }),
    key_id: z.string(),
    slug: z.string().nullable(),
    endpoint_id: z.string(),
    path: z.string().nullable(),
    method: z.string(),
    status: z.number().int().meta({ description: 'HTTP status the caller received' }),
    latency_ms: z.number().int(),
    price_cents: z.number().int().meta({ description: 'List price of the endpoint at call time' }),
    charged_cents: z.number().int().meta({ description: 'What the call cost after discounts; 0 when refunded' }),
    error_code: z.string().nullable(),
    created_at: Timestamp,
  })
  .meta({ id: 'UsageEvent' });
export type UsageEvent = z.infer<typeof UsageEventSchema>;

export const UsageSummarySchema = z
  .object({
    from: Timestamp,
    to: Timestamp,
    totals: z.object({ ...Counts, failed_calls: z.number().int() }),
    by_api: z.array(z.object({ api_id: z.string(), slug: z.string(), ...Counts })),
    by_key: z.array(z.object({ key_id: z.string(), ...Counts })),
    by_day: z.array(z.object({ day: z.string().meta({ description: 'UTC date, YYYY-MM-DD' }), ...Counts })),
    events: PageOf(UsageEventSchema).meta({ description: 'The newest calls first, paged by limit/offset' }),
  })
  .meta({ id: 'UsageSummary' });
export type UsageSummary = z.infer<typeof UsageSummarySchema>;
