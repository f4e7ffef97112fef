/** Catalog requests ("please list an API for X"): recorded for the operator, 10 per minute per org or IP. */
import type { AppContext } from '../context.js';
import { SvcError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { WindowLimiter } from '../lib/rate-limit.js';

const requestLimiter = new WindowLimiter(10, 60_000);

export interface CatalogRequestInput {
  query: string;
  email?: string | undefined;
  notes?: string | undefined;
}

/** `who` is the limiter key: the org id when signed in, else `ip:<address>`. */
export async function recordCatalogRequest(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  who: { orgId: string | null; limitKey: string },
  b: CatalogRequestInput,
) {
  const now = ctx.clock.now();
  const wait = requestLimiter.take(who.limitKey, now);
  if (wait) throw new SvcError('rate_limited', 'Too many catalog requests; try again later', { retryAfter: wait });
  const row = {
    id: newId('creq', now),
    org_id: who.orgId,
    query: b.query,
    email: b.email ?? null,
    notes: b.notes ?? null,
    created_at: now,
  };
  await ctx.db.insertInto('catalog_requests').values(row).execute();
  return {
    // Not `request_id`: that name means the X-Svc-Request-Id of a call everywhere else.
    catalog_request_id: row.id,
    query: row.query,
    email: row.email,
    notes: row.notes,
    created_at: new Date(now).toISOString(),
  };
}
