/** The provider's own listings as it sees them (drafts included): the paged list and one listing's detail. */
import type { Db } from '../../core/db/database.js';
import { pageOf } from '../lib/pagination.js';
import { getOwnedApi, listEndpoints, pendingChanges } from './apis.repo.js';
import { toProviderApi, toProviderApiDetail } from './apis.serialize.js';
import type { ProviderApiDetail, ProviderApiList } from '../../core/schemas/providers.schemas.js';
import { assertScope, type Principal } from '../auth/principal.js';

/** Draft and live listings of the org, newest first, each with its count of current endpoints. */
export async function listOwnedApis(
  db: Db,
  caller: Principal | undefined,
  limit: number,
  offset: number,
): Promise<ProviderApiList> {
  const { orgId } = assertScope(caller, 'provider:write');
  const page = pageOf(
    await db
      .selectFrom('apis')
      .selectAll()
      .where('org_id', '=', orgId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .offset(offset)
      .execute(),
    limit,
    offset,
  );
  const rows = page.data;
  const counts = await db
    .selectFrom('endpoints')
    .select(['api_id', db.fn.countAll<number>().as('n')])
    .where('removed_at', 'is', null)
    .where('api_id', 'in', rows.length ? rows.map((r) => r.id) : [''])
    .groupBy('api_id')
    .execute();
  const byApi = new Map(counts.map((r) => [r.api_id, Number(r.n)]));
  return { ...page, data: rows.map((r) => ({ ...toProviderApi(r), endpoint_count: byApi.get(r.id) ?? 0 })) };
}

/** One owned listing with its endpoints, prices and pending increases; not_found for another org's listing. */
export async function ownedApiDetail(db: Db, caller: Principal | undefined, apiId: string): Promise<ProviderApiDetail> {
  const { orgId } = assertScope(caller, 'provider:write');
  const api = await getOwnedApi(db, orgId, apiId);
  return toProviderApiDetail(api, await listEndpoints(db, apiId), await pendingChanges(db, apiId));
}
