/** Time bounds in query strings: a plain ISO date (2026-11-01, UTC midnight) or an ISO date-time, parsed to ms UTC. */
import { z } from '@hono/zod-openapi';

export const InstantQuery = z
  .string()
  .refine(
    (s) => /^\d{4}-\d{2}-\d{2}(T.*)?$/.test(s) && !Number.isNaN(Date.parse(s)),
    'must be an ISO date (2026-11-01) or date-time',
  )
  .transform((s) => Date.parse(s));
