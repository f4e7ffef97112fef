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
import { FormErrors, TextField } from '../fields.js';
import {
  centsToDollarsInput,
  fieldErrorsOf,
  fieldErrorsOfSvc,
  formObject,
  moneyFields,
  type FieldErrors,
  type FieldLabel,
  type FormState,
} from '../form.js';
import { AutoReloadInputSchema, CheckoutInputSchema } from '../../../core/schemas/billing.schemas.js';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { renderPage } from '../layout.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { DashNav } from './dashboard-nav.js';

export const billingPages = newWebRouter();

/** Which billing form a refusal belongs to (`buy` or `reload`), with the input and the message per field. */
interface Refused extends FormState {
  form: 'buy' | 'reload';
}

billingPages.get('/dashboard/billing', (c) => billingPage(c));

// Long: a page: the data it shows is loaded at the top, the rest is the markup of one view (balance, packs, reload,
// history).
async function billingPage(c: Context<WebEnv>, refused?: Refused, code: ContentfulStatusCode = 200) {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const stateFor = (form: Refused['form']) => (refused?.form === form ? refused : undefined);
  const status = await billingStatus(ctx, p);
  const packs = packsView(ctx.config);
  const ar = status.auto_reload;
  return renderPage(
    c,
    { title: 'Billing', status: code },
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
      <form class="stack" method="post" action="/dashboard/billing/checkout" novalidate>
        {csrfField(c)}
        <FormErrors errors={stateFor('buy')?.errors} />
        <TextField
          form="buy"
          name="amount"
          label="Or another amount ($)"
          hint={`between ${formatCents(packs.custom_amount.min_cents)} and ${formatCents(packs.custom_amount.max_cents)}`}
          inputmode="decimal"
          state={stateFor('buy')}
        />
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
      <form class="stack" method="post" action="/dashboard/billing/auto-reload" novalidate>
        {csrfField(c)}
        <FormErrors errors={stateFor('reload')?.errors} />
        <label class="check">
          <input
            type="checkbox"
            name="enabled"
            value="on"
            checked={stateFor('reload') ? stateFor('reload')?.values.enabled === 'on' : ar.enabled}
          />{' '}
          Reload automatically
        </label>
        <TextField
          form="reload"
          name="threshold"
          label="When the balance falls below ($)"
          inputmode="decimal"
          value={centsToDollarsInput(ar.threshold_cents)}
          state={stateFor('reload')}
        />
        <TextField
          form="reload"
          name="amount"
          label="Add ($)"
          inputmode="decimal"
          value={centsToDollarsInput(ar.amount_cents)}
          state={stateFor('reload')}
        />
        <div>
          <button type="submit">Save auto-reload</button>
        </div>
      </form>
    </>,
  );
}

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

/** What the person reads for a refused amount: the configured bounds in dollars, not `amount_cents` in cents. */
function amountLabels(c: Context<WebEnv>, field: string, label: string): Record<string, FieldLabel> {
  const { checkoutMinCents: min, checkoutMaxCents: max } = c.get('ctx').config.billing;
  const message = `Enter an amount between ${formatCents(min)} and ${formatCents(max)}.`;
  return {
    amount_cents: { label, field, money: true, message },
    amount: { label, field, money: true, message },
  };
}

billingPages.post('/dashboard/billing/checkout', async (c) => {
  const p = requireWebSession(c);
  const values = await formObject(c);
  const labels = amountLabels(c, 'amount', 'Amount');
  const errors: FieldErrors = {};
  const money = values.pack ? {} : moneyFields(values, { amount: 'amount_cents' }, errors);
  if (!values.pack && money.amount_cents === null) errors.amount ??= 'Enter an amount in dollars, like 25.';
  const parsed = CheckoutInputSchema.safeParse(values.pack ? { pack: values.pack } : money);
  if (!parsed.success) fieldErrorsOf(parsed.error, labels, errors);
  if (!parsed.success || Object.keys(errors).length > 0) return billingPage(c, { form: 'buy', values, errors }, 400);
  try {
    const r = await startCheckout(c.get('ctx'), p, parsed.data, base(c));
    return goTo(c, r.url, 'Checkout');
  } catch (e) {
    return billingPage(c, { form: 'buy', values, errors: fieldErrorsOfSvc(e, labels) }, 400);
  }
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
  const values = await formObject(c);
  const labels: Record<string, FieldLabel> = {
    threshold_cents: { label: 'Threshold', field: 'threshold', money: true },
    ...amountLabels(c, 'amount', 'Amount to add'),
  };
  const errors: FieldErrors = {};
  const money = moneyFields(values, { threshold: 'threshold_cents', amount: 'amount_cents' }, errors);
  const parsed = AutoReloadInputSchema.safeParse({
    enabled: values.enabled === 'on',
    ...(money.threshold_cents == null ? {} : { threshold_cents: money.threshold_cents }),
    ...(money.amount_cents == null ? {} : { amount_cents: money.amount_cents }),
  });
  if (!parsed.success) fieldErrorsOf(parsed.error, labels, errors);
  if (!parsed.success || Object.keys(errors).length > 0) return billingPage(c, { form: 'reload', values, errors }, 400);
  try {
    await setAutoReload(c.get('ctx'), p, parsed.data);
  } catch (e) {
    return billingPage(c, { form: 'reload', values, errors: fieldErrorsOfSvc(e, labels) }, 400);
  }
  return c.redirect('/dashboard/billing', 303);
});
