/** "Please list an API for X": recorded for the marketplace operator, rate-limited per org (or per IP when anonymous). */
import { newId } from '../../core/ids.js';
import type { CatalogRequest, CatalogRequestInput } from '../../core/schemas/catalog.schemas.js';
import type { AppContext } from '../context.js';

/** `requester`: the caller's org, or `ip:<address>` for an anonymous caller (the rate-limit key). */
export async function recordCatalogRequest(
  ctx: Pick<AppContext, 'db' | 'clock' | 'limiters'>,
  requester: { orgId: string } | { ip: string },
  input: CatalogRequestInput,
): Promise<CatalogRequest> {
  const now = ctx.clock.now();
  const who = 'orgId' in requester ? requester.orgId : `ip:${requester.ip}`;
  ctx.limiters.catalogRequests.enforce(who, now, () => 'Too many catalog requests; try again later');
  const row = {
    id: newId('creq', now),
    org_id: 'orgId' in requester ? requester.orgId : null,
    query: input.query,
    email: input.email ?? null,
    notes: input.notes ?? null,
    created_at: now,
  };
  await ctx.db.insertInto('catalog_requests').values(row).execute();
  return {
    catalog_request_id: row.id,
    query: row.query,
    email: row.email,
    notes: row.notes,
    created_at: new Date(now).toISOString(),
  };
}
