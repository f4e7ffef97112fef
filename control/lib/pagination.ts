/** One pagination rule for every list route: limit 1..100 (default 20), offset 0..10000 (default 0). */
import { z } from '@hono/zod-openapi';

export const PAGE_DEFAULT_LIMIT = 20;
export const PAGE_MAX_LIMIT = 100;
export const PAGE_MAX_OFFSET = 10_000;

export const PaginationQuery = z.object({
  limit: z.coerce.number().int().min(1).max(PAGE_MAX_LIMIT).default(PAGE_DEFAULT_LIMIT),
  offset: z.coerce.number().int().min(0).max(PAGE_MAX_OFFSET).default(0),
});

export interface Page<T> {
  data: T[];
  limit: number;
  offset: number;
  has_more: boolean;
}

/** The response schema of one page of `item`s (defined with the other shared schema pieces in core/). */
export { PageOf } from '../../core/schemas/common.schemas.js';

/** Query limit+1 rows, then call this to trim and compute has_more. */
export function pageOf<T>(rows: T[], limit: number, offset: number): Page<T> {
  return { data: rows.slice(0, limit), limit, offset, has_more: rows.length > limit };
}
