/** The signed-in dashboard's overview: org, balance, and links to keys, usage, billing and terms. */
import { getBalance } from '../../ledger/ledger.service.js';
import { formatCents } from '../../../core/money.js';
import { renderPage } from '../layout.js';
import { newWebRouter } from '../web-env.js';
import { requireWebSession } from '../web-session.js';

export const dashboardRoutes = newWebRouter();

dashboardRoutes.get('/dashboard', async (c) => {
  const p = requireWebSession(c);
  const session = c.get('webSession')!;
  const balance = await getBalance(c.get('ctx').db, p.orgId);
  return renderPage(
    c,
    { title: 'Dashboard' },
    <>
      <dl class="facts">
        <dt>Signed in as</dt>
        <dd>{session.email}</dd>
        <dt>Organization</dt>
        <dd>
          {session.orgName} <span class="tag">{p.role ?? 'member'}</span>
        </dd>
        <dt>Balance</dt>
        <dd>{formatCents(balance.credit_cents)}</dd>
      </dl>
    </>,
  );
});
