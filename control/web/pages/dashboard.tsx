/**
 * The signed-in dashboard's overview, built to say what to do next: the getting-started checklist (ticked from real
 * state by control/orgs/getting-started.service.ts), open alerts, the balance with its 14-day trend, the last calls.
 */
import { dashboardGuide, type ChecklistStep } from '../../orgs/getting-started.service.js';
import { formatCents } from '../../../core/money.js';
import { shortTime } from '../format.js';
import { renderPage } from '../layout.js';
import { csrfField } from '../csrf.js';
import { newWebRouter } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { DashNav } from './dashboard-nav.js';

export const dashboardRoutes = newWebRouter();

/** What each step asks and where it is done. */
const STEPS: Record<ChecklistStep['id'], { what: string; href: string; action: string }> = {
  verify_email: { what: 'Verify your email', href: '/login', action: 'Sign in with a code' },
  add_credits: { what: 'Add credits', href: '/dashboard/billing', action: 'Buy credits' },
  capped_key: { what: 'Create an agent key with caps', href: '/dashboard/keys', action: 'Create a key' },
  connect_agent: { what: 'Connect an agent (svc connect or the MCP URL)', href: '/#connect', action: 'How to connect' },
  first_call: { what: 'Make a first call', href: '/catalog', action: 'Find an API' },
};

/** A text sparkline of the balance's daily change: up/down/flat per day, with the numbers for screen readers. */
function Trend(props: { days: Array<{ day: string; net_cents: number }> }) {
  const moved = props.days.filter((d) => d.net_cents !== 0);
  if (moved.length === 0) return <p class="hint">No credit movement in the last 14 days.</p>;
  const bars = props.days.map((d) => (d.net_cents > 0 ? '▲' : d.net_cents < 0 ? '▼' : '·')).join('');
  const added = moved.filter((d) => d.net_cents > 0).reduce((s, d) => s + d.net_cents, 0);
  const spent = -moved.filter((d) => d.net_cents < 0).reduce((s, d) => s + d.net_cents, 0);
  return (
    <p class="meta">
      <span aria-hidden="true">{bars}</span> Last 14 days: {formatCents(added)} added, {formatCents(spent)} spent.
    </p>
  );
}

// Long: a page: one read per section at the top, the rest is the markup of one view (checklist, balance, keys, usage).
dashboardRoutes.get('/dashboard', async (c) => {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const session = c.get('webSession');
  const g = await dashboardGuide(ctx.db, p, ctx.clock.now());
  const done = g.steps.filter((s) => s.done).length;
  return renderPage(
    c,
    { title: 'Dashboard' },
    <>
      <DashNav current="/dashboard" />
      {g.alerts.length > 0 ? (
        <section aria-labelledby="alerts">
          <h2 id="alerts">Needs your attention</h2>
          {g.alerts.map((a) => (
            <p class="notice error" data-alert={a.kind}>
              {a.detail} <a href={a.href}>Fix it</a>
            </p>
          ))}
        </section>
      ) : null}
      <section aria-labelledby="start">
        <h2 id="start">
          Getting started <span class="hint">{`${done} of ${g.steps.length} done`}</span>
        </h2>
        <ol class="checklist">
          {g.steps.map((s) => (
            <li class={s.done ? 'done' : 'todo'} data-step={s.id}>
              <span class="mark" aria-hidden="true">
                {s.done ? '✓' : ''}
              </span>
              <span class="what">
                {STEPS[s.id].what}
                <span class="visually-hidden">{s.done ? ' (done)' : ' (to do)'}</span>
              </span>
              {s.done ? null : <a href={STEPS[s.id].href}>{STEPS[s.id].action}</a>}
            </li>
          ))}
        </ol>
      </section>
      <h2>Balance</h2>
      <p>
        <strong class="big" data-testid="balance">
          {formatCents(g.balance_cents)}
        </strong>{' '}
        <a href="/dashboard/billing">Add credits</a>
      </p>
      <Trend days={g.balance_trend} />
      <h2>Last calls</h2>
      {g.last_calls.length === 0 ? (
        <p class="empty">No calls yet. Pick an API in the catalog and try it from its page.</p>
      ) : (
        <div class="table-wrap" tabindex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">API</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Charged
                </th>
              </tr>
            </thead>
            <tbody>
              {g.last_calls.map((r) => (
                <tr>
                  <td>{shortTime(new Date(r.created_at).toISOString())}</td>
                  <td>
                    <a href={`/apis/${r.slug}`}>{r.slug}</a> <code>{r.method}</code>
                  </td>
                  <td>{r.status}</td>
                  <td class="num">{formatCents(r.charged_cents)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p>
        <a href="/dashboard/usage">All usage</a>
      </p>
      <h2>Account</h2>
      <dl class="facts">
        <dt>Signed in as</dt>
        <dd>{session?.email}</dd>
        <dt>Organization</dt>
        <dd>
          {session?.orgName} <span class="tag">{p.role ?? 'member'}</span>
        </dd>
      </dl>
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
