/** "Please list an API for X": recorded for the marketplace operator, rate-limited per org (or per IP when anonymous). */
import { newId } from '../../core/ids.js';
import type { CatalogRequest, CatalogRequestInput } from '../../core/schemas/catalog.schemas.js';
import type { AppContext } from '../context.js';
import { assertPublicRead, type Principal } from '../auth/principal.js';

/**
 * A public write: anyone may ask. A credential that is sent must carry `catalog:read`; the rate-limit key is the
 * caller's org, or `ip:<address>` (the client's address) for an anonymous caller.
 */
export async function recordCatalogRequest(
  ctx: Pick<AppContext, 'db' | 'clock' | 'limiters'>,
  reader: Principal | undefined,
  clientIp: string,
  input: CatalogRequestInput,
): Promise<CatalogRequest> {
  const p = assertPublicRead(reader, 'catalog:read');
  const requester: { orgId: string } | { ip: string } = p ? { orgId: p.orgId } : { ip: clientIp };
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
    // Not `request_id`: that name means the X-Svc-Request-Id of a call everywhere else.
    catalog_request_id: row.id,
    query: row.query,
    email: row.email,
    notes: row.notes,
    created_at: new Date(now).toISOString(),
  };
}
