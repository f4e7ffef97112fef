/**
 * Verify (upstream smoke test with the stored credential) and the draft <-> live transitions.
 * Publish needs accept_terms, a base URL, at least one endpoint and (unless skip_verify) a passing verify.
 */
import type { AppContext } from '../context.js';
import { recordChange } from '../../core/db/changes.js';
import { decryptSecret } from '../../core/crypto.js';
import { SvcError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { safeFetch } from '../catalog/safe-fetch.js';
import { getOwnedApi, listEndpoints, type EndpointSummaryRow, type OwnedApi } from './apis.repo.js';
import { ensureProviderProfile } from './profile.service.js';
import type { VerifyResult } from '../../core/schemas/providers.schemas.js';
import { assertScope, type Principal } from '../auth/principal.js';

export type { VerifyResult };
export type VerifyCheck = VerifyResult['checks'][number];

const MAX_CHECKS = 5;

/** GET endpoints with no required parameters (or the declared health path) are safe to call without input. */
function checkable(endpoints: EndpointSummaryRow[]): EndpointSummaryRow[] {
  return endpoints.filter((e) => {
    if (e.method !== 'GET' || e.path.includes('{')) return false;
    try {
      const params = JSON.parse(e.parameters_json) as { required?: boolean }[];
      return !params.some((p) => p.required === true);
    } catch {
      return false;
    }
  });
}

/** @public Pure: the verification request for a listing row. */
export function buildUpstreamRequest(
  ctx: AppContext,
  api: OwnedApi,
  path: string,
): { url: string; headers: Record<string, string> } {
  const url = new URL(api.base_url!.replace(/\/+$/, '') + path);
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'svc-verify/1' };
  if (api.secret_enc) {
    const secret = decryptSecret(ctx.secretKey, api.secret_enc);
    if (api.injection === 'bearer') headers.authorization = `Bearer ${secret}`;
    else if (api.injection === 'header') headers[api.injection_name!.toLowerCase()] = secret;
    else if (api.injection === 'query') url.searchParams.set(api.injection_name!, secret);
  }
  return { url: url.toString(), headers };
}

export async function verifyApi(ctx: AppContext, caller: Principal | undefined, apiId: string): Promise<VerifyResult> {
  const { orgId } = assertScope(caller, 'provider:write');
  const api = await getOwnedApi(ctx.db, orgId, apiId);
  if (!api.base_url)
    throw new SvcError('invalid_state', 'Set base_url (PATCH /v1/provider/apis/:api_id) before verifying');
  const endpoints = await listEndpoints(ctx.db, apiId);
  const targets: { endpoint_id: string | null; path: string }[] = api.health_path
    ? [
        {
          endpoint_id: endpoints.find((e) => e.method === 'GET' && e.path === api.health_path)?.id ?? null,
          path: api.health_path,
        },
      ]
    : checkable(endpoints)
        .slice(0, MAX_CHECKS)
        .map((e) => ({ endpoint_id: e.id, path: e.path }));
  const checks: VerifyCheck[] = [];
  for (const t of targets) {
    const { url, headers } = buildUpstreamRequest(ctx, api, t.path);
    try {
      const res = await safeFetch(url, {
        production: ctx.config.isProduction,
        egressAllow: ctx.config.egressAllow,
        // A 3xx answer proves the upstream is there; following it would carry the secret elsewhere.
        maxRedirects: 0,
        headers,
        timeoutMs: 5_000,
        maxBytes: 1024 * 1024,
      });
      checks.push({
        ...t,
        method: 'GET',
        status: res.status,
        latency_ms: res.latencyMs,
        ok: res.status >= 200 && res.status < 400,
        error: null,
      });
    } catch (e) {
      const code = e instanceof SvcError ? e.code : 'upstream_error';
      checks.push({
        ...t,
        method: 'GET',
        status: null,
        latency_ms: null,
        ok: false,
        error: e instanceof SvcError ? `${code}: ${e.detail}` : String(e),
      });
    }
  }
  const ok = checks.length > 0 && checks.every((c) => c.ok);
  const detail =
    checks.length === 0
      ? 'No GET endpoint without required parameters to call: set health_path, or publish with skip_verify'
      : ok
        ? `${checks.length} check(s) passed`
        : `${checks.filter((c) => !c.ok).length} of ${checks.length} check(s) failed`;
  const now = ctx.clock.now();
  const verificationId = newId('vrf', now);
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('verifications')
      .values({
        id: verificationId,
        api_id: apiId,
        ok: ok ? 1 : 0,
        results_json: JSON.stringify(checks),
        created_at: now,
      })
      .execute();
    await trx
      .updateTable('apis')
      .set({ last_verified_at: now, last_verify_ok: ok ? 1 : 0 })
      .where('id', '=', apiId)
      .execute();
  });
  return { verification_id: verificationId, ok, checks, detail };
}

export async function publishApi(
  ctx: AppContext,
  caller: Principal | undefined,
  apiId: string,
  opts: { accept_terms?: boolean | undefined; skip_verify?: boolean | undefined },
): Promise<{ verify: VerifyResult | null }> {
  const { orgId } = assertScope(caller, 'provider:write');
  const api = await getOwnedApi(ctx.db, orgId, apiId);
  if (api.status === 'live') throw new SvcError('invalid_state', 'This listing is already live');
  if (api.suspended_at !== null) throw new SvcError('invalid_state', 'This listing is suspended by the operator');
  if (opts.accept_terms !== true)
    throw new SvcError(
      'accept_terms_required',
      'Publishing requires accept_terms: true (the marketplace provider terms)',
    );
  if (!api.base_url) throw new SvcError('invalid_state', 'Set base_url before publishing');
  const endpoints = await listEndpoints(ctx.db, apiId);
  if (endpoints.length === 0) throw new SvcError('invalid_state', 'A listing needs at least one endpoint to publish');
  let verify: VerifyResult | null = null;
  if (opts.skip_verify !== true) {
    verify = await verifyApi(ctx, caller, apiId);
    if (!verify.ok)
      throw new SvcError('verification_failed', verify.detail, {
        extra: { checks: verify.checks, verification_id: verify.verification_id },
      });
  }
  await ensureProviderProfile(ctx, orgId);
  const now = ctx.clock.now();
  await ctx.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('apis')
      .set({ status: 'live', published_at: now, publish_terms_accepted_at: now, updated_at: now })
      .where('id', '=', apiId)
      .where('status', '=', 'draft')
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) throw new SvcError('invalid_state', 'This listing is already live');
    await trx
      .insertInto('activity')
      .values({
        id: newId('act', now),
        kind: 'publish',
        api_id: apiId,
        org_id: orgId,
        data_json: JSON.stringify({ slug: api.slug, name: api.name }),
        created_at: now,
      })
      .execute();
    await recordChange(trx, 'api', apiId, now);
  });
  return { verify };
}

export async function unpublishApi(ctx: AppContext, caller: Principal | undefined, apiId: string): Promise<void> {
  const { orgId } = assertScope(caller, 'provider:write');
  const api = await getOwnedApi(ctx.db, orgId, apiId);
  const now = ctx.clock.now();
  await ctx.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('apis')
      .set({ status: 'draft', updated_at: now })
      .where('id', '=', apiId)
      .where('status', '=', 'live')
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) throw new SvcError('invalid_state', 'Only a live listing can be unpublished');
    await trx
      .insertInto('activity')
      .values({
        id: newId('act', now),
        kind: 'unpublish',
        api_id: apiId,
        org_id: orgId,
        data_json: JSON.stringify({ slug: api.slug, name: api.name }),
        created_at: now,
      })
      .execute();
    await recordChange(trx, 'api', apiId, now);
  });
}
