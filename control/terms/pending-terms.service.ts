/**
 * "Terms awaiting acceptance" for one org: the APIs it has called (any `usage_calls` row) or tried to call and was
 * refused with 428 (`terms_refusals`, recorded by the gateway), whose newest activated terms document it has not
 * accepted. One query, used by the dashboard page, `GET /v1/terms/pending` and whoever else needs it.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { numOf } from '../../core/db/id-nums.js';
import type { PendingTermsList } from '../../core/schemas/terms.schemas.js';
import { iso } from '../providers/apis.serialize.js';
import { assertAuthenticated, type Principal } from '../auth/principal.js';

/** Any credential of the org (key or session, no scope needed: it names only APIs that org itself used). */
export async function pendingTerms(db: Db, principal: Principal | undefined): Promise<PendingTermsList> {
  const { orgId } = assertAuthenticated(principal);
  const used = db
    .selectFrom('usage_calls as u')
    .innerJoin('id_nums as n', 'n.num', 'u.api_num')
    .select('n.id as api_id')
    .where('u.org_num', '=', numOf(orgId))
    .union(db.selectFrom('terms_refusals').select('api_id').where('org_id', '=', orgId));
  const rows = await db
    .selectFrom('legal_documents as d')
    .innerJoin('apis as a', 'a.id', 'd.api_id')
    .leftJoin('terms_refusals as r', (j) => j.onRef('r.api_id', '=', 'd.api_id').on('r.org_id', '=', orgId))
    .select(['a.slug', 'a.name', 'd.id', 'd.version', 'd.acceptance_mode', 'r.last_refused_at'])
    .where('d.status', '=', 'activated')
    .where('a.org_id', '!=', orgId)
    .where('d.api_id', 'in', used)
    .where(
      sql<boolean>`d.activated_at = (SELECT max(d2.activated_at) FROM legal_documents d2 WHERE d2.api_id = d.api_id AND d2.status = 'activated')`,
    )
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('terms_acceptances as t')
            .select('t.id')
            .whereRef('t.document_id', '=', 'd.id')
            .where('t.org_id', '=', orgId),
        ),
      ),
    )
    .orderBy('d.acceptance_mode', 'desc') // 'required' before 'optional'
    .orderBy('a.name')
    .limit(500)
    .execute();
  return {
    data: rows.map((r) => ({
      api_slug: r.slug,
      api_name: r.name,
      document_id: r.id,
      version: r.version,
      acceptance_mode: r.acceptance_mode,
      refused_at: r.last_refused_at === null ? null : iso(Number(r.last_refused_at)),
      accept_url: `/apis/${r.slug}#terms`,
    })),
  };
}
