/**
 * What an import answers: the listing, its import report and the first page of its endpoints with their count and
 * the link to the rest, never every endpoint (a 22,000-operation import would be a multi-MB answer built on the
 * control plane's event loop). `GET /v1/provider/apis/:api_id/endpoints` pages through them.
 */
import type { Db } from '../../core/db/database.js';
import { pageOf } from '../lib/pagination.js';
import { PAGE_MAX_LIMIT } from '../../core/schemas/common.schemas.js';
import { getOwnedApi, listEndpoints, pendingChanges } from './apis.repo.js';
import { toProviderApi, toProviderEndpoint } from './apis.serialize.js';
import { assertScope, type Principal } from '../auth/principal.js';

/** Endpoints an import's answer carries: one full page. */
export const IMPORT_RESPONSE_ENDPOINTS = PAGE_MAX_LIMIT;

/** One page of an owned listing's current endpoints, in document order, with prices and pending increases. */
export async function ownedEndpointsPage(
  db: Db,
  caller: Principal | undefined,
  apiId: string,
  limit: number,
  offset: number,
) {
  const { orgId } = assertScope(caller, 'provider:write');
  await getOwnedApi(db, orgId, apiId);
  const rows = await listEndpoints(db, apiId, false, { limit: limit + 1, offset });
  const pending = new Map((await pendingChanges(db, apiId)).map((p) => [p.endpoint_id, p]));
  const page = pageOf(rows, limit, offset);
  return { ...page, data: page.data.map((e) => toProviderEndpoint(e, pending.get(e.id))) };
}

/** The listing as an import answers it: `endpoints` is the first page; `endpoint_count` and `endpoints_url` the rest. */
export async function importedApiResponse(db: Db, caller: Principal | undefined, apiId: string) {
  const { orgId } = assertScope(caller, 'provider:write');
  const api = toProviderApi(await getOwnedApi(db, orgId, apiId));
  const first = await ownedEndpointsPage(db, caller, apiId, IMPORT_RESPONSE_ENDPOINTS, 0);
  const { n } = await db
    .selectFrom('endpoints')
    .select(db.fn.countAll<number>().as('n'))
    .where('api_id', '=', apiId)
    .where('removed_at', 'is', null)
    .executeTakeFirstOrThrow();
  return {
    ...api,
    endpoint_count: Number(n),
    endpoints: first.data,
    endpoints_has_more: first.has_more,
    endpoints_url: `/v1/provider/apis/${apiId}/endpoints`,
  };
}
