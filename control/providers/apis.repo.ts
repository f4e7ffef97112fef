/** Queries over a provider's own listings and endpoints (taking `db` or a transaction). */
import type { Db, Row } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';

export async function getOwnedApi(db: Db, orgId: string, apiId: string): Promise<Row<'apis'>> {
  const row = await db.selectFrom('apis').selectAll().where('id', '=', apiId).executeTakeFirst();
  // Another org's listing is reported as missing, not forbidden, so ids cannot be probed.
  if (!row || row.org_id !== orgId) throw new SvcError('not_found', `No listing ${apiId} in this organization`);
  return row;
}

export function listEndpoints(db: Db, apiId: string, includeRemoved = false): Promise<Row<'endpoints'>[]> {
  let q = db.selectFrom('endpoints').selectAll().where('api_id', '=', apiId);
  if (!includeRemoved) q = q.where('removed_at', 'is', null);
  return q.orderBy('position').orderBy('id').execute();
}

export function pendingChanges(db: Db, apiId: string): Promise<Row<'price_changes'>[]> {
  return db
    .selectFrom('price_changes')
    .selectAll()
    .where('api_id', '=', apiId)
    .where('status', '=', 'pending')
    .execute();
}

/** Lowercase, dash-separated, 3..60 chars: the catalog-side identifier of a listing or a provider. */
export function slugify(s: string): string {
  const base = s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50);
  return base.length >= 3 ? base : `api-${base || 'listing'}`;
}

export async function uniqueApiSlug(db: Db, wanted: string): Promise<string> {
  const base = slugify(wanted);
  for (let i = 1; i < 50; i++) {
    const candidate = i === 1 ? base : `${base}-${i}`;
    const taken = await db.selectFrom('apis').select('id').where('slug', '=', candidate).executeTakeFirst();
    if (!taken) return candidate;
  }
  return `${base}-${Date.now().toString(36)}`;
}
