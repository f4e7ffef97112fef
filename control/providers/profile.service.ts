/**
 * Provider profiles: created on first publish (or first update), edited by the org, listed in the public directory.
 * A new profile is announced in the activity feed once.
 */
import { sql } from 'kysely';
import type { AppContext } from '../context.js';
import { pageOf } from '../lib/pagination.js';
import type { Db, Row } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { slugify } from './apis.repo.js';
import { assertLinkUrls } from '../../core/link-url.js';
import type { ProviderDirectory, ProviderPage, ProviderProfile } from '../../core/schemas/providers.schemas.js';
import { listingSummaries, toListingSummary } from '../catalog/listing-summary.js';
import { assertScope, type Principal, assertPublicRead } from '../auth/principal.js';

export interface ProfilePatch {
  slug?: string | undefined;
  display_name?: string | undefined;
  bio?: string | null | undefined;
  website?: string | null | undefined;
  logo_url?: string | null | undefined;
}

/** @public A serialiser of a public profile. */
export function toProfile(p: Row<'providers'>, liveListings?: number): ProviderProfile {
  return {
    slug: p.slug,
    display_name: p.display_name,
    bio: p.bio,
    website: p.website,
    logo_url: p.logo_url,
    ...(liveListings === undefined ? {} : { live_listings: liveListings }),
    created_at: new Date(p.created_at).toISOString(),
    updated_at: new Date(p.updated_at).toISOString(),
  };
}

async function freeProviderSlug(db: Db, wanted: string): Promise<string> {
  const base = slugify(wanted);
  for (let i = 1; i < 50; i++) {
    const s = i === 1 ? base : `${base}-${i}`;
    if (!(await db.selectFrom('providers').select('org_id').where('slug', '=', s).executeTakeFirst())) return s;
  }
  return `${base}-${Date.now().toString(36)}`;
}

/** @internal Inside publishApi and getMyProfile, which authorize. */
export async function ensureProviderProfile(ctx: AppContext, orgId: string): Promise<Row<'providers'>> {
  const existing = await ctx.db.selectFrom('providers').selectAll().where('org_id', '=', orgId).executeTakeFirst();
  if (existing) return existing;
  const org = await ctx.db
    .selectFrom('orgs')
    .select(['name', 'email'])
    .where('id', '=', orgId)
    .executeTakeFirstOrThrow();
  const display = (org.name.includes('@') ? org.name.split('@')[0]! : org.name) || 'provider';
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const again = await trx.selectFrom('providers').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    if (again) return again;
    const row = {
      org_id: orgId,
      slug: await freeProviderSlug(trx, display),
      display_name: display,
      bio: null,
      website: null,
      logo_url: null,
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto('providers').values(row).execute();
    await trx
      .insertInto('activity')
      .values({
        id: newId('act', now),
        kind: 'new_provider',
        api_id: null,
        org_id: orgId,
        data_json: JSON.stringify({ slug: row.slug, display_name: display }),
        created_at: now,
      })
      .execute();
    return row;
  });
}

export async function getMyProfile(ctx: AppContext, caller: Principal | undefined): Promise<Row<'providers'>> {
  const { orgId } = assertScope(caller, 'provider:write');
  const p = await ctx.db.selectFrom('providers').selectAll().where('org_id', '=', orgId).executeTakeFirst();
  if (!p)
    throw new SvcError(
      'not_found',
      'No provider profile yet: PATCH /v1/provider/profile creates one (publishing does too)',
    );
  return p;
}

export async function updateMyProfile(
  ctx: AppContext,
  caller: Principal | undefined,
  patch: ProfilePatch,
): Promise<Row<'providers'>> {
  const { orgId } = assertScope(caller, 'provider:write');
  assertLinkUrls({ website: patch.website, logo_url: patch.logo_url }, ctx.config.isProduction);
  const current = await ensureProviderProfile(ctx, orgId);
  const now = ctx.clock.now();
  if (patch.slug !== undefined && patch.slug !== current.slug) {
    if (slugify(patch.slug) !== patch.slug)
      throw new SvcError('validation_failed', 'slug must be lowercase letters, digits and dashes', {
        errors: [{ path: 'slug', message: 'invalid slug' }],
      });
    const taken = await ctx.db
      .selectFrom('providers')
      .select('org_id')
      .where('slug', '=', patch.slug)
      .executeTakeFirst();
    if (taken) throw new SvcError('conflict', `The provider slug ${patch.slug} is taken`);
  }
  const set = {
    updated_at: now,
    ...(patch.slug !== undefined ? { slug: patch.slug } : {}),
    ...(patch.display_name !== undefined ? { display_name: patch.display_name } : {}),
    ...(patch.bio !== undefined ? { bio: patch.bio } : {}),
    ...(patch.website !== undefined ? { website: patch.website } : {}),
    ...(patch.logo_url !== undefined ? { logo_url: patch.logo_url } : {}),
  };
  await ctx.db.updateTable('providers').set(set).where('org_id', '=', orgId).execute();
  return { ...current, ...set };
}

/** The public provider directory: most live listings first, optional text filter on name, slug and bio. */
export async function listProviders(
  db: Db,
  reader: Principal | undefined,
  p: { query?: string | undefined; limit: number; offset: number },
): Promise<ProviderDirectory> {
  assertPublicRead(reader, 'catalog:read');
  let q = db
    .selectFrom('providers')
    .leftJoin('apis', (j) =>
      j
        .onRef('apis.org_id', '=', 'providers.org_id')
        .on('apis.status', '=', 'live')
        .on('apis.suspended_at', 'is', null),
    )
    .selectAll('providers')
    .select(sql<number>`count(apis.id)`.as('live_listings'))
    .groupBy('providers.org_id');
  if (p.query) {
    const like = `%${p.query.replace(/[%_\\]/g, (m) => '\\' + m)}%`;
    q = q.where((eb) =>
      eb.or([
        sql<boolean>`providers.display_name LIKE ${like} ESCAPE '\\'`,
        sql<boolean>`providers.slug LIKE ${like} ESCAPE '\\'`,
        sql<boolean>`coalesce(providers.bio, '') LIKE ${like} ESCAPE '\\'`,
      ]),
    );
  }
  const rows = await q
    .orderBy('live_listings', 'desc')
    .orderBy('providers.created_at')
    .limit(p.limit + 1)
    .offset(p.offset)
    .execute();
  const page = pageOf(rows, p.limit, p.offset);
  return { ...page, data: page.data.map((r) => toProfile(r, Number(r.live_listings))) };
}

/** A public provider page: the profile and its live listings; not_found for an unknown slug. */
export async function providerPage(db: Db, reader: Principal | undefined, slug: string): Promise<ProviderPage> {
  assertPublicRead(reader, 'catalog:read');
  const prov = await db.selectFrom('providers').selectAll().where('slug', '=', slug).executeTakeFirst();
  if (!prov) throw new SvcError('not_found', 'No provider with this slug');
  const listings = (await listingSummaries(db, { orgId: prov.org_id })).map(toListingSummary);
  return { ...toProfile(prov, listings.length), listings };
}
