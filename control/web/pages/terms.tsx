/** Dashboard terms: required terms of APIs the org has called (or tried to) that it has not accepted yet. */
import { sql } from 'kysely';
import { renderPage } from '../layout.js';
import { newWebRouter } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { DashNav } from './dashboard-nav.js';
import { mayAcceptTerms } from '../../terms/terms.service.js';

export const termsPages = newWebRouter();

termsPages.get('/dashboard/terms', async (c) => {
  const p = requireWebSession(c);
  const { db } = c.get('ctx');
  // The newest activated document per API the org used, where that document has no acceptance from the org.
  const rows = await db
    .selectFrom('legal_documents as d')
    .innerJoin('apis as a', 'a.id', 'd.api_id')
    .select(['a.slug', 'a.name', 'd.version', 'd.acceptance_mode'])
    .where('d.status', '=', 'activated')
    .where('d.api_id', 'in', db.selectFrom('usage_events').select('api_id').where('org_id', '=', p.orgId).distinct())
    .where(
      sql<boolean>`d.activated_at = (SELECT max(d2.activated_at) FROM legal_documents d2 WHERE d2.api_id = d.api_id AND d2.status = 'activated')`,
    )
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('terms_acceptances as t')
            .select('t.id')
            .whereRef('t.document_id', '=', 'd.id')
            .where('t.org_id', '=', p.orgId),
        ),
      ),
    )
    .orderBy('a.name')
    .execute();
  return renderPage(
    c,
    { title: 'Terms awaiting acceptance' },
    <>
      <DashNav current="/dashboard/terms" />
      {mayAcceptTerms(p) ? null : <p class="notice">Only an owner or admin of your organization can accept terms.</p>}
      {rows.length === 0 ? (
        <p>Nothing waiting: every API your organization used has its current terms accepted (or has none).</p>
      ) : (
        <ul>
          {rows.map((r) => (
            <li>
              <a href={`/apis/${r.slug}#terms`}>{r.name}</a>: version {r.version} ({r.acceptance_mode})
            </li>
          ))}
        </ul>
      )}
      <p class="hint">
        Calling an API whose required terms are not accepted is refused with 428. Accept them on the API's page.
      </p>
    </>,
  );
});
