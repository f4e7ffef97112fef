/**
 * Provider listing lifecycle rules: create/import (draft), re-import (endpoints keep ids and prices), metadata patch,
 * upstream credentials. Every write a gateway caches records an 'api' change in the same transaction.
 */
import type { AppContext } from '../context.js';
import { assertLinkUrls } from '../../core/link-url.js';
import { assertInjectable } from './credential-rules.js';
import type { Db, Injection, Row, RowPatch } from '../../core/db/database.js';
import { recordChange } from '../../core/db/changes.js';
import { encryptSecret, fingerprint } from '../../core/crypto.js';
import { SvcError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { plainText, type ImportedEndpoint, type ImportReport } from '../catalog/openapi-import.js';
import { assertFetchableUrl } from '../catalog/safe-fetch.js';
import { normalizeCategory } from '../catalog/category.js';
import { getOwnedApi, importedApiSlug, slugify } from './apis.repo.js';
import { importNewListing, resolveImport, type ImportSourceInput } from './import-source.js';
import {
  deferSearchPaths,
  discardNewListing,
  endpointRow,
  importedFields,
  refreshSearchPaths,
  type StoreStats,
} from '../catalog/import-store.js';
import { assertScope, type Principal } from '../auth/principal.js';
import { takeImport } from '../auth/abuse-limits.js';
import { toProviderApi } from './apis.serialize.js';
import type { ProviderApi } from '../../core/schemas/providers.schemas.js';

export interface ListingMetadata {
  name?: string | undefined;
  slug?: string | undefined;
  summary?: string | undefined;
  description?: string | undefined;
  category?: string | undefined;
  tags?: string[] | undefined;
  base_url?: string | null | undefined;
  docs_url?: string | null | undefined;
  logo_url?: string | null | undefined;
  health_path?: string | null | undefined;
}

export async function createApi(
  ctx: AppContext,
  caller: Principal | undefined,
  input: ImportSourceInput & ListingMetadata,
): Promise<{ apiId: string; warnings: string[]; report: ImportReport; stored: StoreStats }> {
  const { orgId } = assertScope(caller, 'provider:write');
  takeImport(ctx, orgId);
  assertLinkUrls({ docs_url: input.docs_url, logo_url: input.logo_url }, ctx.config.isProduction);
  // Set once the listing row exists: from then on a failure must remove it again.
  let created = null as { apiId: string; now: number } | null;
  try {
    const imported = await importNewListing(ctx, input, async ({ kind, url, api }) => {
      const name = input.name ?? api.title;
      if (!name)
        throw new SvcError('import_failed', 'The document has an empty `info.title`: send `name` with the import', {
          extra: { limit: 'title', value: 0, max: 200, at: '/info/title' },
        });
      const baseUrl = input.base_url ?? api.baseUrl;
      if (baseUrl) assertFetchableUrl(baseUrl, ctx.config.isProduction, ctx.config.egressAllow);
      const now = ctx.clock.now();
      const apiId = newId('api', now);
      await ctx.db.transaction().execute(async (trx) => {
        const slug = input.slug ? await requireFreeSlug(trx, input.slug) : await importedApiSlug(trx, { name, ...api });
        await trx
          .insertInto('apis')
          .values({
            id: apiId,
            org_id: orgId,
            slug,
            name,
            summary: input.summary ?? firstSentence(plainText(api.description)),
            description: input.description ?? api.description,
            category: input.category ? normalizeCategory(input.category) : api.category,
            tags: JSON.stringify(input.tags ?? api.tags),
            base_url: baseUrl ?? null,
            docs_url: input.docs_url ?? null,
            logo_url: input.logo_url ?? null,
            health_path: input.health_path ?? null,
            suspended_at: null,
            suspended_reason: null,
            source_kind: kind,
            source_url: url,
            openapi_json: null,
            // The worker writes the document and the schema components with the endpoints.
            openapi_gz: null,
            import_report_json: JSON.stringify(api.report),
            secret_enc: null,
            secret_fingerprint: null,
            injection_name: null,
            published_at: null,
            publish_terms_accepted_at: null,
            last_verified_at: null,
            last_verify_ok: null,
            created_at: now,
            updated_at: now,
          })
          .execute();
        await deferSearchPaths(trx, apiId);
      });
      created = { apiId, now };
      return { dbFile: ctx.config.dbFile, databaseUrl: ctx.config.databaseUrl, apiId, now };
    });
    const { apiId, now } = created!;
    // The worker wrote the document, components, endpoints and search paths (import-store.ts); the change feed the
    // gateways follow is recorded here, once the listing is whole.
    await ctx.db.transaction().execute((trx) => recordChange(trx, 'api', apiId, now));
    ctx.log.info('import stored', {
      api_id: apiId,
      endpoints: imported.api.endpointCount,
      ...imported.stats,
      ...imported.stored,
    });
    return { apiId, warnings: imported.api.warnings, report: imported.api.report, stored: imported.stored };
  } catch (e) {
    if (created) await discardNewListing(ctx.db, created.apiId);
    throw e;
  }
}

/** Re-import from a new source, or from the stored source URL when none is given. Prices and ids survive. */
export async function reimportApi(
  ctx: AppContext,
  caller: Principal | undefined,
  apiId: string,
  input: ImportSourceInput,
): Promise<{ warnings: string[]; removed: number; added: number; report: ImportReport }> {
  const { orgId } = assertScope(caller, 'provider:write');
  takeImport(ctx, orgId);
  const existing = await getOwnedApi(ctx.db, orgId, apiId);
  let source = input;
  if (input.openapi_url === undefined && input.rapidapi_url === undefined && input.body === undefined) {
    if (!existing.source_url)
      throw new SvcError(
        'validation_failed',
        'This listing was imported from a body: send `body` (or a URL) to re-import',
      );
    source =
      existing.source_kind === 'rapidapi_url'
        ? { rapidapi_url: existing.source_url }
        : { openapi_url: existing.source_url };
  }
  const imported = await resolveImport(ctx, source);
  const now = ctx.clock.now();
  let result = { removed: 0, added: 0 };
  await ctx.db.transaction().execute(async (trx) => {
    await deferSearchPaths(trx, apiId);
    result = await syncEndpoints(trx, apiId, imported.api.endpoints, now);
    await refreshSearchPaths(trx, apiId);
    await trx
      .updateTable('apis')
      .set({
        openapi_json: null,
        openapi_gz: Buffer.from(imported.api.documentGzip),
        schema_components_json: JSON.stringify(imported.api.components),
        import_report_json: JSON.stringify(imported.api.report),
        source_kind: imported.kind,
        source_url: imported.url,
        updated_at: now,
      })
      .where('id', '=', apiId)
      .execute();
    await recordChange(trx, 'api', apiId, now);
  });
  return { warnings: imported.api.warnings, report: imported.api.report, ...result };
}

/**
 * Matches endpoints by (method, path): matched rows keep id, price and discounts; missing ones are soft-removed
 * (removed_at) so usage history still resolves; a path that comes back is revived with its old price.
 */
async function syncEndpoints(
  trx: Db,
  apiId: string,
  incoming: ImportedEndpoint[],
  now: number,
): Promise<{ removed: number; added: number }> {
  const existing = await trx.selectFrom('endpoints').selectAll().where('api_id', '=', apiId).execute();
  const byKey = new Map(existing.map((e) => [`${e.method} ${e.path}`, e]));
  const seen = new Set<string>();
  const fresh: { ep: ImportedEndpoint; position: number }[] = [];
  for (const [position, ep] of incoming.entries()) {
    const key = `${ep.method} ${ep.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const fields = importedFields(ep, position, now);
    const old = byKey.get(key);
    if (old) {
      await trx
        .updateTable('endpoints')
        .set({ ...fields, removed_at: null })
        .where('id', '=', old.id)
        .execute();
    } else fresh.push({ ep, position });
  }
  for (let i = 0; i < fresh.length; i += INSERT_BATCH)
    await trx
      .insertInto('endpoints')
      .values(fresh.slice(i, i + INSERT_BATCH).map(({ ep, position }) => endpointRow(apiId, ep, position, now)))
      .execute();
  const added = fresh.length;
  const gone = existing.filter((e) => !seen.has(`${e.method} ${e.path}`) && e.removed_at === null);
  for (const e of gone) {
    await trx.updateTable('endpoints').set({ removed_at: now, updated_at: now }).where('id', '=', e.id).execute();
    await trx
      .updateTable('price_changes')
      .set({ status: 'cancelled', cancelled_at: now })
      .where('endpoint_id', '=', e.id)
      .where('status', '=', 'pending')
      .execute();
  }
  return { removed: gone.length, added };
}

/** Rows per multi-row INSERT (13 columns each, far below SQLite's bound-parameter limit). */
const INSERT_BATCH = 200;

export async function patchApi(
  ctx: AppContext,
  caller: Principal | undefined,
  apiId: string,
  patch: ListingMetadata,
): Promise<void> {
  const { orgId } = assertScope(caller, 'provider:write');
  const api = await getOwnedApi(ctx.db, orgId, apiId);
  assertLinkUrls({ docs_url: patch.docs_url, logo_url: patch.logo_url }, ctx.config.isProduction);
  const now = ctx.clock.now();
  const set: RowPatch<'apis'> = { updated_at: now };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.summary !== undefined) set.summary = patch.summary;
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.category !== undefined) set.category = normalizeCategory(patch.category);
  if (patch.tags !== undefined) set.tags = JSON.stringify(patch.tags);
  if (patch.docs_url !== undefined) set.docs_url = patch.docs_url;
  if (patch.logo_url !== undefined) set.logo_url = patch.logo_url;
  if (patch.health_path !== undefined) set.health_path = patch.health_path;
  if (patch.base_url !== undefined) {
    if (patch.base_url !== null) assertFetchableUrl(patch.base_url, ctx.config.isProduction, ctx.config.egressAllow);
    set.base_url = patch.base_url === null ? null : patch.base_url.replace(/\/+$/, '');
  }
  await ctx.db.transaction().execute(async (trx) => {
    if (patch.slug !== undefined && patch.slug !== api.slug) {
      // Consumers and agents address a live listing by slug; renaming it under them would break their calls.
      if (api.status === 'live')
        throw new SvcError('invalid_state', 'The slug of a live listing cannot change: unpublish first');
      set.slug = await requireFreeSlug(trx, patch.slug);
    }
    await trx.updateTable('apis').set(set).where('id', '=', apiId).execute();
    await recordChange(trx, 'api', apiId, now);
  });
}

export async function setCredentials(
  ctx: AppContext,
  caller: Principal | undefined,
  apiId: string,
  input: { secret: string; injection?: Exclude<Injection, 'none'> | undefined; injection_name?: string | undefined },
): Promise<ProviderApi['credentials']> {
  const { orgId } = assertScope(caller, 'provider:write');
  await getOwnedApi(ctx.db, orgId, apiId);
  assertInjectable(input.secret, input.injection ?? 'bearer', input.injection_name);
  const injection = input.injection ?? 'bearer';
  if ((injection === 'header' || injection === 'query') && !input.injection_name) {
    throw new SvcError(
      'validation_failed',
      `injection '${injection}' needs injection_name (the header or query parameter name)`,
      {
        errors: [{ path: 'injection_name', message: 'required for header and query injection' }],
      },
    );
  }
  const now = ctx.clock.now();
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('apis')
      .set({
        secret_enc: encryptSecret(ctx.secretKey, input.secret),
        secret_fingerprint: fingerprint(input.secret),
        injection,
        injection_name: injection === 'bearer' ? (input.injection_name ?? null) : input.injection_name!,
        updated_at: now,
      })
      .where('id', '=', apiId)
      .execute();
    await recordChange(trx, 'api', apiId, now);
  });
  return toProviderApi(await getOwnedApi(ctx.db, orgId, apiId)).credentials;
}

async function requireFreeSlug(db: Db, wanted: string): Promise<string> {
  const slug = slugify(wanted);
  if (slug !== wanted)
    throw new SvcError('validation_failed', `slug must be lowercase letters, digits and dashes (e.g. ${slug})`, {
      errors: [{ path: 'slug', message: 'invalid slug' }],
    });
  const taken = await db.selectFrom('apis').select('id').where('slug', '=', slug).executeTakeFirst();
  if (taken) throw new SvcError('conflict', `The slug ${slug} is taken`);
  return slug;
}

function firstSentence(s: string): string {
  const line = s.split('\n')[0] ?? '';
  const m = /^(.{1,280}?[.!?])(\s|$)/.exec(line);
  return (m ? m[1]! : line).slice(0, 280);
}

export type ApiRow = Row<'apis'>;
