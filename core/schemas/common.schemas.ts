/** Field shapes every domain's schemas share. */
import { z } from 'zod';

/** Integer cents, the only money type (core/money.ts). */
export const CentsField = z.number().int().min(0).max(100_000_000);

/** A signed sum of cents (totals, net earnings after reversals): still integer cents, may be negative. */
export const CentsAmount = z.number().int();

/** Every timestamp on the wire: ISO 8601 in UTC (`2026-11-23T12:00:00.000Z`); stored as integer ms. */
export const Timestamp = z.iso.datetime();

/** The answer of every list route: one page, and whether another follows (docs/api.md). */
export function PageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), limit: z.number().int(), offset: z.number().int(), has_more: z.boolean() });
}

/** One pagination rule for every list operation: limit 1..100 (default 20), offset 0..10000 (default 0). */
export const PAGE_DEFAULT_LIMIT = 20;
export const PAGE_MAX_LIMIT = 100;
export const PAGE_MAX_OFFSET = 10_000;

/** Paging in a query string (REST) or as numbers (MCP): both coerce. */
export const PaginationQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(PAGE_MAX_LIMIT).default(PAGE_DEFAULT_LIMIT),
  offset: z.coerce.number().int().min(0).max(PAGE_MAX_OFFSET).default(0),
});

/** Time bounds in query strings: a plain ISO date (2026-11-01, UTC midnight) or an ISO date-time, parsed to ms UTC. */
export const InstantQuerySchema = z
  .string()
  .refine(
    (s) => /^\d{4}-\d{2}-\d{2}(T.*)?$/.test(s) && !Number.isNaN(Date.parse(s)),
    'must be an ISO date (2026-11-01) or date-time',
  )
  .transform((s) => Date.parse(s));
