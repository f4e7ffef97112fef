/**
 * Dashboard terms: APIs the org has called, or was refused with 428 for, whose current terms it has not accepted
 * (control/terms/pending-terms.service.ts, the same list as GET /v1/terms/pending).
 */
import { pendingTerms } from '../../terms/pending-terms.service.js';
import { shortTime } from '../format.js';
import { renderPage } from '../layout.js';
import { newWebRouter } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { DashNav } from './dashboard-nav.js';
import { mayAcceptTerms } from '../../terms/terms.service.js';

export const termsPages = newWebRouter();

termsPages.get('/dashboard/terms', async (c) => {
  const p = requireWebSession(c);
  const rows = (await pendingTerms(c.get('ctx').db, p)).data;
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
              <a href={r.accept_url}>{r.api_name}</a>: version {r.version} ({r.acceptance_mode})
              {r.refused_at ? <span class="hint"> · a call was refused {shortTime(r.refused_at)}</span> : null}
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
