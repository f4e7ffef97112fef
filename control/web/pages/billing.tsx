/**
 * Dashboard billing: balance, credit packs and a custom amount (checkout), card setup, the billing portal and
 * auto-reload. Processor pages on our own origin (test payments) are reached by redirect; an outside processor
 * page gets a "continue" link instead, so the CSP `form-action` can stay 'self'.
 */
import type { Context } from 'hono';
import { billingStatus, packsView } from '../../billing/account.service.js';
import { publicBaseFor } from '../../billing/billing.routes.js';
import { startCheckout } from '../../billing/checkout.service.js';
import { openPortal, setAutoReload, startCardSetup } from '../../billing/cards.service.js';
import { formatCents } from '../../../core/money.js';
import { csrfField } from '../csrf.js';
import { centsToDollarsInput, dollarsToCents, formString } from '../form.js';
import { renderPage } from '../layout.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { DashNav } from './dashboard-nav.js';

export const billingPages = newWebRouter();

billingPages.get('/dashboard/billing', async (c) => {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const status = await billingStatus(ctx, p);
  const packs = packsView(ctx.config);
  const ar = status.auto_reload;
  return renderPage(
    c,
    { title: 'Billing' },
    <>
      <DashNav current="/dashboard/billing" />
      {status.payments_mode === 'test' ? (
        <p class="banner" role="note">
          <strong>Test payments</strong>: this server uses the local test-payments mode. No real money moves.
        </p>
      ) : null}
      <dl class="facts">
        <dt>Balance</dt>
        <dd data-testid="balance">{formatCents(status.credit_cents)}</dd>
        <dt>Reserved by calls in flight</dt>
        <dd>{formatCents(status.reserved_cents)}</dd>
        <dt>Card on file</dt>
        <dd>{status.card ? `${status.card.brand ?? 'card'} ending ${status.card.last4 ?? '????'}` : 'none'}</dd>
      </dl>
      <h2>Buy credits</h2>
      <ul class="cards">
        {packs.data.map((pack) => (
          <li class="card">
            <h3>{pack.name}</h3>
            <p>
              Pay {formatCents(pack.price_cents)}, get {formatCents(pack.credit_cents)}
              {pack.bonus_cents > 0 ? ` (${formatCents(pack.bonus_cents)} bonus)` : ''}.
            </p>
            <form method="post" action="/dashboard/billing/checkout">
              {csrfField(c)}
              <input type="hidden" name="pack" value={pack.id} />
              <button type="submit">Buy {pack.name}</button>
            </form>
          </li>
        ))}
      </ul>
      <form class="stack" method="post" action="/dashboard/billing/checkout">
        {csrfField(c)}
        <label>
          Or another amount ($)
          <span class="hint">
            between {formatCents(packs.custom_amount.min_cents)} and {formatCents(packs.custom_amount.max_cents)}
          </span>
          <input name="amount" inputmode="decimal" required />
        </label>
        <div>
          <button type="submit">Buy credits</button>
        </div>
      </form>
      <h2>Card and portal</h2>
      <div class="row">
        <form method="post" action="/dashboard/billing/card">
          {csrfField(c)}
          <button type="submit">{status.card ? 'Replace card' : 'Add a card'}</button>
        </form>
        <form method="post" action="/dashboard/billing/portal">
          {csrfField(c)}
          <button class="secondary" type="submit">
            Open billing portal
          </button>
        </form>
      </div>
      <h2>Auto-reload</h2>
      <p>
        {ar.enabled
          ? `On: below ${formatCents(ar.threshold_cents ?? 0)}, add ${formatCents(ar.amount_cents ?? 0)} from the card.`
          : 'Off.'}
        {ar.paused ? ' Paused after repeated card failures: save a new card to resume.' : ''}
      </p>
      <form class="stack" method="post" action="/dashboard/billing/auto-reload">
        {csrfField(c)}
        <label class="check">
          <input type="checkbox" name="enabled" value="on" checked={ar.enabled} /> Reload automatically
        </label>
        <label>
          When the balance falls below ($)
          <input name="threshold" inputmode="decimal" value={centsToDollarsInput(ar.threshold_cents)} />
        </label>
        <label>
          Add ($)
          <input name="amount" inputmode="decimal" value={centsToDollarsInput(ar.amount_cents)} />
        </label>
        <div>
          <button type="submit">Save auto-reload</button>
        </div>
      </form>
    </>,
  );
});

const base = (c: Context<WebEnv>) => publicBaseFor(c.get('ctx').config, c.req.url);

/** Same-origin processor page: redirect. Outside processor: a page with a link (form-action stays 'self'). */
function goTo(c: Context<WebEnv>, url: string, what: string) {
  if (new URL(url).origin === new URL(base(c)).origin) return c.redirect(new URL(url).pathname, 303);
  return renderPage(
    c,
    { title: what },
    <p>
      <a class="button" href={url}>
        Continue to {what.toLowerCase()}
      </a>
    </p>,
  );
}

billingPages.post('/dashboard/billing/checkout', async (c) => {
  const p = requireWebSession(c);
  const pack = await formString(c, 'pack');
  const amount = pack ? null : dollarsToCents('amount', await formString(c, 'amount'));
  const req = pack ? { pack } : { amount_cents: amount ?? 0 };
  const r = await startCheckout(c.get('ctx'), p, req, base(c));
  return goTo(c, r.url, 'Checkout');
});

billingPages.post('/dashboard/billing/card', async (c) => {
  const p = requireWebSession(c);
  const r = await startCardSetup(c.get('ctx'), p, base(c));
  return goTo(c, r.url, 'Card setup');
});

billingPages.post('/dashboard/billing/portal', async (c) => {
  const p = requireWebSession(c);
  const r = await openPortal(c.get('ctx'), p, base(c));
  return goTo(c, r.url, 'Billing portal');
});

billingPages.post('/dashboard/billing/auto-reload', async (c) => {
  const p = requireWebSession(c);
  await setAutoReload(c.get('ctx'), p, {
    enabled: (await formString(c, 'enabled')) === 'on',
    threshold: dollarsToCents('threshold', await formString(c, 'threshold')) ?? undefined,
    amount: dollarsToCents('amount', await formString(c, 'amount')) ?? undefined,
  });
  return c.redirect('/dashboard/billing', 303);
});
