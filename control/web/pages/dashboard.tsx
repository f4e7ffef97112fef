/** The signed-in dashboard's overview: org, balance, and links to keys, usage, billing and terms. */
import { billingStatus } from '../../billing/account.service.js';
import { formatCents } from '../../../core/money.js';
import { renderPage } from '../layout.js';
import { csrfField } from '../csrf.js';
import { newWebRouter } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { DashNav } from './dashboard-nav.js';

export const dashboardRoutes = newWebRouter();

dashboardRoutes.get('/dashboard', async (c) => {
  const p = requireWebSession(c);
  const session = c.get('webSession')!;
  const balance = await billingStatus(c.get('ctx'), p);
  return renderPage(
    c,
    { title: 'Dashboard' },
    <>
      <DashNav current="/dashboard" />
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
      <h2>Sessions</h2>
      <form method="post" action="/logout/all">
        {csrfField(c)}
        <button class="secondary" type="submit">
          Sign out everywhere
        </button>
      </form>
      <p class="hint">Ends every session of your account: other browsers and `svc login` on other machines.</p>
    </>,
  );
});
