/** Catalog-side lookups: a listing by slug is visible when live and not suspended (its owner also sees a draft). */
import type { Db, Row } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';

export async function getVisibleListing(db: Db, slug: string, viewerOrgId?: string | null): Promise<Row<'apis'>> {
  const row = await db.selectFrom('apis').selectAll().where('slug', '=', slug).executeTakeFirst();
  const visible =
    row && ((row.status === 'live' && row.suspended_at === null) || (viewerOrgId && row.org_id === viewerOrgId));
  if (!row || !visible) throw new SvcError('listing_not_found', `No live listing with slug ${slug}`);
  return row;
}
