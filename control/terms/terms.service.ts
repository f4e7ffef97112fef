/**
 * Provider legal documents (created -> activated) and consumer acceptance per org and per document. The active
 * document of a listing is its latest activated one; the gateway answers 428 until the caller's org accepted it.
 */
import { AUDIENCE_WINDOW_MS, emitToOrgs, recentCallerOrgs } from '../webhooks/events.js';
import type { AppContext } from '../context.js';
import type { Db, Row } from '../../core/db/database.js';
import { recordChange } from '../../core/db/changes.js';
import { SvcError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { getOwnedApi } from '../providers/apis.repo.js';
import type {
  ListingTerms,
  TermsAcceptance,
  TermsDocument,
  TermsDocumentList,
} from '../../core/schemas/terms.schemas.js';
import { getVisibleListing } from '../catalog/listings.repo.js';
import { iso } from '../providers/apis.serialize.js';
import { pageOf } from '../lib/pagination.js';
import { assertOrgAdmin, assertScope, assertSession, assertAuthenticated, type Principal } from '../auth/principal.js';

export interface NewDocument {
  kind: 'terms';
  source: 'hosted';
  version: string;
  markdown: string;
  api_id: string;
  acceptance_mode: 'required' | 'optional';
}

/** @public A serialiser: the document as REST, MCP and the CLI show it. */
export function toDocument(d: Row<'legal_documents'>): TermsDocument {
  return {
    document_id: d.id,
    api_id: d.api_id,
    kind: d.kind,
    source: d.source,
    version: d.version,
    acceptance_mode: d.acceptance_mode,
    status: d.status,
    markdown: d.markdown,
    created_at: new Date(d.created_at).toISOString(),
    activated_at: d.activated_at === null ? null : new Date(d.activated_at).toISOString(),
  };
}

export async function createDocument(
  ctx: AppContext,
  caller: Principal | undefined,
  input: NewDocument,
): Promise<Row<'legal_documents'>> {
  const { orgId } = assertScope(caller, 'provider:write');
  await getOwnedApi(ctx.db, orgId, input.api_id);
  const now = ctx.clock.now();
  const dup = await ctx.db
    .selectFrom('legal_documents')
    .select('id')
    .where('api_id', '=', input.api_id)
    .where('kind', '=', input.kind)
    .where('version', '=', input.version)
    .executeTakeFirst();
  if (dup)
    throw new SvcError(
      'conflict',
      `Version ${input.version} of this listing's ${input.kind} already exists (${dup.id})`,
    );
  const row = {
    id: newId('doc', now),
    org_id: orgId,
    ...input,
    status: 'created' as const,
    created_at: now,
    activated_at: null,
  };
  await ctx.db.insertInto('legal_documents').values(row).execute();
  return row;
}

/** @internal The query behind documentPage (which authorizes). */
export function listDocuments(
  db: Db,
  orgId: string,
  apiId: string | undefined,
  limit: number,
  offset: number,
): Promise<Row<'legal_documents'>[]> {
  let q = db.selectFrom('legal_documents').selectAll().where('org_id', '=', orgId);
  if (apiId) q = q.where('api_id', '=', apiId);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
}

export async function activateDocument(
  ctx: AppContext,
  caller: Principal | undefined,
  documentId: string,
): Promise<Row<'legal_documents'>> {
  const { orgId } = assertScope(caller, 'provider:write');
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const doc = await trx.selectFrom('legal_documents').selectAll().where('id', '=', documentId).executeTakeFirst();
    if (!doc || doc.org_id !== orgId) throw new SvcError('not_found', `No document ${documentId} in this organization`);
    if (doc.status !== 'created') throw new SvcError('invalid_state', 'This document is already activated');
    await trx
      .updateTable('legal_documents')
      .set({ status: 'activated', activated_at: now })
      .where('id', '=', documentId)
      .execute();
    await recordChange(trx, 'terms', doc.api_id, now);
    await announceTerms(trx, doc, now);
    return { ...doc, status: 'activated' as const, activated_at: now };
  });
}

/** @public The terms a listing shows everyone. The document in force for a listing: the most recently activated one (rowid breaks same-millisecond ties). */
export function activeDocument(db: Db, apiId: string): Promise<Row<'legal_documents'> | undefined> {
  return db
    .selectFrom('legal_documents')
    .selectAll()
    .where('api_id', '=', apiId)
    .where('status', '=', 'activated')
    .orderBy('activated_at', 'desc')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** @internal One org's acceptance of one document, for services that already know who asks. */
export async function acceptanceOf(
  db: Db,
  orgId: string,
  documentId: string,
): Promise<Row<'terms_acceptances'> | undefined> {
  return db
    .selectFrom('terms_acceptances')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('document_id', '=', documentId)
    .executeTakeFirst();
}

/**
 * Whether this caller may accept terms for its org (SPEC: "an org owner or admin accepts via a session"): what a
 * page asks before it offers the accept button. acceptTerms enforces the same rule.
 */
export function mayAcceptTerms(caller: Principal | undefined): boolean {
  try {
    assertOrgAdmin(assertSession(caller));
    return true;
  } catch {
    return false;
  }
}

/**
 * Records the org's acceptance of the active document; accepting twice is a no-op that returns the first record.
 * Only an org owner or admin, through a session (SPEC: terms acceptance), may accept: a key, even one its owner
 * created, is refused with `session_required`; a session of a user who is neither is refused with `forbidden`.
 */
export async function acceptTerms(
  ctx: AppContext,
  caller: Principal | undefined,
  apiId: string,
  expectedDocumentId?: string,
): Promise<{ document: Row<'legal_documents'>; acceptance: Row<'terms_acceptances'>; already: boolean }> {
  const p = assertOrgAdmin(assertSession(caller));
  const userId = p.userId;
  if (userId === null) throw new SvcError('session_required', 'Terms are accepted by a person, through a session.');
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const doc = await activeDocument(trx, apiId);
    if (!doc) throw new SvcError('not_found', 'This listing has no active terms to accept');
    if (expectedDocumentId && expectedDocumentId !== doc.id) {
      throw new SvcError(
        'conflict',
        `The active terms are now version ${doc.version} (${doc.id}); read them and accept that document`,
        { extra: { document_id: doc.id, version: doc.version } },
      );
    }
    const existing = await acceptanceOf(trx, p.orgId, doc.id);
    if (existing) return { document: doc, acceptance: existing, already: true };
    const acceptance = {
      id: newId('acc', now),
      org_id: p.orgId,
      api_id: apiId,
      document_id: doc.id,
      user_id: userId,
      accepted_at: now,
    };
    await trx.insertInto('terms_acceptances').values(acceptance).execute();
    await recordChange(trx, 'terms', apiId, now);
    return { document: doc, acceptance, already: false };
  });
}

/** The org's terms documents (optionally of one listing), newest first, one page. */
export async function documentPage(
  db: Db,
  caller: Principal | undefined,
  apiId: string | undefined,
  limit: number,
  offset: number,
): Promise<TermsDocumentList> {
  const { orgId } = assertScope(caller, 'provider:write');
  const page = pageOf(await listDocuments(db, orgId, apiId, limit + 1, offset), limit, offset);
  return { ...page, data: page.data.map(toDocument) };
}

/** A visible listing's active terms and whether the viewer's org accepted them. */
export async function listingTerms(db: Db, caller: Principal | undefined, slug: string): Promise<ListingTerms> {
  const { orgId } = assertAuthenticated(caller);
  const api = await getVisibleListing(db, slug, orgId);
  const doc = await activeDocument(db, api.id);
  const acc = doc ? await acceptanceOf(db, orgId, doc.id) : undefined;
  return {
    slug: api.slug,
    api_id: api.id,
    document: doc ? toDocument(doc) : null,
    required: doc?.acceptance_mode === 'required',
    accepted: acc !== undefined,
    accepted_at: acc ? iso(acc.accepted_at) : null,
  };
}

/** acceptTerms for a visible listing named by slug, answered as the REST and MCP surfaces show it. */
export async function acceptListingTerms(
  ctx: AppContext,
  caller: Principal | undefined,
  slug: string,
  expectedDocumentId?: string,
): Promise<TermsAcceptance> {
  const p = assertOrgAdmin(assertSession(caller));
  const api = await getVisibleListing(ctx.db, slug, p.orgId);
  const r = await acceptTerms(ctx, p, api.id, expectedDocumentId);
  return {
    slug: api.slug,
    document_id: r.document.id,
    version: r.document.version,
    accepted: true,
    already_accepted: r.already,
    accepted_at: iso(r.acceptance.accepted_at),
  };
}

/** `terms.updated` to orgs that accepted earlier terms of the listing or called it in the last 30 days. */
async function announceTerms(trx: Db, doc: Row<'legal_documents'>, now: number): Promise<void> {
  const api = await trx
    .selectFrom('apis')
    .select(['slug', 'name'])
    .where('id', '=', doc.api_id)
    .executeTakeFirstOrThrow();
  const accepted = await trx
    .selectFrom('terms_acceptances')
    .select('org_id')
    .distinct()
    .where('api_id', '=', doc.api_id)
    .execute();
  const orgs = new Set([
    ...accepted.map((r) => r.org_id),
    ...(await recentCallerOrgs(trx, doc.api_id, now - AUDIENCE_WINDOW_MS)),
  ]);
  await emitToOrgs(
    trx,
    [...orgs],
    {
      type: 'terms.updated',
      data: {
        api_id: doc.api_id,
        slug: api.slug,
        name: api.name,
        document_id: doc.id,
        version: doc.version,
        acceptance_mode: doc.acceptance_mode,
      },
      dedupeKey: doc.id,
    },
    now,
  );
}
