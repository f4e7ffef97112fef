/**
 * Pages of the local test-payments mode (checkout, card setup, portal, Connect onboarding) and the return page
 * both back-ends send browsers to. Every test page says "TEST MODE - no real money"; they answer 404 when Stripe
 * is configured. Page URLs are capabilities (random refs or HMAC-signed tokens), not sessions; their forms carry
 * the CSRF token like every other form.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Child } from 'hono/jsx';
import { formatCents } from '../../../core/money.js';
import { findPayment, getAccount, listPayments } from '../../billing/billing.repo.js';
import { removeCard } from '../../billing/cards.service.js';
import { applyVerifiedEvent } from '../../billing/webhooks.service.js';
import {
  connectLinkSig,
  testCardOutcome,
  testCheckoutPaidEvent,
  testOnboardingDoneEvent,
  testSetupSucceededEvent,
  verifyPortalToken,
} from '../../billing/test-backend.js';
import { csrfField } from '../csrf.js';
import { formString } from '../form.js';
import { renderPage } from '../layout.js';
import { newWebRouter, type WebEnv } from '../web-env.js';

export const testPaymentsPages = newWebRouter();

const BANNER = (
  <p class="banner" role="note">
    <strong>TEST MODE - no real money</strong>. Pay with test card 4242 4242 4242 4242 (any future date, any CVC); 4000
    0000 0000 0002 is declined.
  </p>
);

function page(
  c: Context<WebEnv>,
  title: string,
  body: Child,
  status: ContentfulStatusCode = 200,
  testBanner = true,
): Promise<Response> {
  return renderPage(c, { title, status, ...(testBanner ? { banner: BANNER } : {}) }, body);
}

function CardForm(props: { c: Context<WebEnv>; cta: string }) {
  return (
    <form class="stack" method="post" action={props.c.req.path}>
      {csrfField(props.c)}
      <label>
        Card number
        <input name="card" inputmode="numeric" autocomplete="off" placeholder="4242 4242 4242 4242" required />
      </label>
      <label>
        Expiry
        <input name="exp" placeholder="12/34" autocomplete="off" />
      </label>
      <label>
        CVC
        <input name="cvc" placeholder="123" autocomplete="off" />
      </label>
      <div>
        <button type="submit">{props.cta}</button>
      </div>
    </form>
  );
}

function testOnly(c: Context<WebEnv>): Promise<Response> | null {
  const { payments, config } = c.get('ctx');
  return payments.kind === 'test' && config.billing.testPaymentsAllowed
    ? null
    : page(c, 'Not found', <p>Test-payments mode is off on this server.</p>, 404, false);
}

const RETURN_TEXT: Record<string, string> = {
  success: 'Payment received. Credits appear on your balance as soon as the payment is confirmed.',
  card_saved: 'Card saved. It can now be used for auto-reload.',
  cancelled: 'Cancelled. Nothing was charged.',
  portal: 'Back from the billing portal.',
  onboarding_done: 'Onboarding submitted. Payouts start once verification completes.',
  onboarding_refresh: 'The onboarding link expired: run `svc provider connect` again for a new one.',
};

testPaymentsPages.get('/billing/return', (c) => {
  const status = c.req.query('status') ?? 'done';
  return page(
    c,
    'svc billing',
    <>
      <p>{RETURN_TEXT[status] ?? 'Done.'}</p>
      <p>
        You can close this window or go to <a href="/dashboard/billing">billing</a>.
      </p>
    </>,
    200,
    false,
  );
});

async function checkoutOf(c: Context<WebEnv>) {
  const p = await findPayment(c.get('ctx').db, { ref: c.req.param('ref') ?? '' });
  return p && p.kind === 'checkout' && p.processor === 'test' ? p : undefined;
}

testPaymentsPages.get('/billing/test/checkout/:ref', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const p = await checkoutOf(c);
  if (!p) return page(c, 'Checkout not found', <p>No such test checkout.</p>, 404);
  if (p.status === 'succeeded')
    return page(c, 'Already paid', <p>This checkout was paid: {formatCents(p.credit_cents)} of credits were added.</p>);
  return page(
    c,
    'Buy svc credits',
    <>
      <p>
        Pay <strong>{formatCents(p.amount_paid_cents)}</strong>, receive <strong>{formatCents(p.credit_cents)}</strong>{' '}
        of credits{p.pack_id ? ` (pack ${p.pack_id})` : ''}.
      </p>
      <CardForm c={c} cta={`Pay ${formatCents(p.amount_paid_cents)}`} />
    </>,
  );
});

testPaymentsPages.post('/billing/test/checkout/:ref', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const ctx = c.get('ctx');
  const p = await checkoutOf(c);
  if (!p) return page(c, 'Checkout not found', <p>No such test checkout.</p>, 404);
  const outcome = testCardOutcome((await formString(c, 'card')) ?? '');
  if (outcome === 'unknown')
    return page(
      c,
      'Use a test card',
      <>
        <p>Only test cards work here.</p>
        <CardForm c={c} cta="Pay" />
      </>,
      400,
    );
  if (outcome !== 'ok')
    return page(
      c,
      'Card declined',
      <>
        <p>Your card was declined (test card). Nothing was charged; try 4242 4242 4242 4242.</p>
        <CardForm c={c} cta="Pay" />
      </>,
      402,
    );
  const r = await applyVerifiedEvent(ctx, testCheckoutPaidEvent(p));
  return page(
    c,
    'Payment succeeded',
    <p>
      {!r.duplicate && r.outcome === 'credited' ? 'Added' : 'Already added'}:{' '}
      <strong>{formatCents(p.credit_cents)}</strong> of test credits. Back to <a href="/dashboard/billing">billing</a>.
    </p>,
  );
});

async function setupOf(c: Context<WebEnv>) {
  const p = await findPayment(c.get('ctx').db, { ref: c.req.param('ref') ?? '' });
  return p && p.kind === 'setup' && p.processor === 'test' ? p : undefined;
}

testPaymentsPages.get('/billing/test/setup/:ref', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  if (!(await setupOf(c))) return page(c, 'Setup not found', <p>No such test card setup.</p>, 404);
  return page(
    c,
    'Save a card',
    <>
      <p>
        The card is saved for auto-reload (off-session charges). Test card 4000 0000 0000 0341 saves but its later
        charges fail.
      </p>
      <CardForm c={c} cta="Save card" />
    </>,
  );
});

testPaymentsPages.post('/billing/test/setup/:ref', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const ctx = c.get('ctx');
  const p = await setupOf(c);
  if (!p) return page(c, 'Setup not found', <p>No such test card setup.</p>, 404);
  const digits = ((await formString(c, 'card')) ?? '').replace(/\D/g, '');
  const outcome = testCardOutcome(digits);
  if (outcome === 'unknown')
    return page(
      c,
      'Use a test card',
      <>
        <p>Only test cards work here.</p>
        <CardForm c={c} cta="Save card" />
      </>,
      400,
    );
  if (outcome === 'declined')
    return page(
      c,
      'Card declined',
      <>
        <p>This test card is declined. Try 4242 4242 4242 4242.</p>
        <CardForm c={c} cta="Save card" />
      </>,
      402,
    );
  const acc = await getAccount(ctx.db, p.org_id);
  if (!acc?.customer_id) return page(c, 'Setup not found', <p>No billing account.</p>, 404);
  const r = await applyVerifiedEvent(
    ctx,
    testSetupSucceededEvent(p, acc.customer_id, { outcome, last4: digits.slice(-4) }),
  );
  if (r.outcome === 'newer_card_kept')
    return page(c, 'Newer card kept', <p>A card from a newer setup is already on file; this one was not saved.</p>);
  return page(
    c,
    r.duplicate ? 'Card already saved' : 'Card saved',
    <p>
      {r.duplicate ? 'This setup was already completed.' : `Visa ending ${digits.slice(-4)} is now on file.`} Back to{' '}
      <a href="/dashboard/billing">billing</a>.
    </p>,
  );
});

testPaymentsPages.get('/billing/test/portal/:token', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const ctx = c.get('ctx');
  const orgId = verifyPortalToken(ctx.secretKey, c.req.param('token'), ctx.clock.now());
  if (!orgId)
    return page(
      c,
      'Link expired',
      <p>This portal link is invalid or expired: request a new one (svc billing portal).</p>,
      404,
    );
  const acc = await getAccount(ctx.db, orgId);
  const payments = await listPayments(ctx.db, orgId, 20);
  return page(
    c,
    'Billing portal',
    <>
      {acc?.payment_method_id ? (
        <>
          <p>
            Card on file: {acc.card_brand ?? 'card'} ending {acc.card_last4 ?? '????'}
          </p>
          <form method="post" action={`${c.req.path}/remove-card`}>
            {csrfField(c)}
            <button type="submit">Remove card</button>
          </form>
        </>
      ) : (
        <p>No card on file.</p>
      )}
      <p>
        Auto-reload:{' '}
        {acc?.auto_reload_enabled
          ? `on, below ${formatCents(acc.auto_reload_threshold_cents ?? 0)} add ${formatCents(acc.auto_reload_amount_cents ?? 0)}`
          : 'off'}
        .
      </p>
      <h2>Payments</h2>
      <ul>
        {payments.length === 0 ? <li>none</li> : null}
        {payments.map((p) => (
          <li>
            {new Date(p.created_at).toISOString().slice(0, 16)} {p.kind} {formatCents(p.amount_paid_cents)} {p.status}
          </li>
        ))}
      </ul>
    </>,
  );
});

testPaymentsPages.post('/billing/test/portal/:token/remove-card', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const ctx = c.get('ctx');
  const orgId = verifyPortalToken(ctx.secretKey, c.req.param('token'), ctx.clock.now());
  if (!orgId) return page(c, 'Link expired', <p>This portal link is invalid or expired.</p>, 404);
  await ctx.db.transaction().execute((trx) => removeCard(trx, orgId, ctx.clock.now()));
  return page(c, 'Card removed', <p>The card was removed and auto-reload turned off.</p>);
});

testPaymentsPages.get('/billing/test/connect/:account', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const account = c.req.param('account');
  const sig = c.req.query('sig') ?? '';
  if (sig !== connectLinkSig(c.get('ctx').secretKey, account))
    return page(c, 'Link invalid', <p>Request a new onboarding link (svc provider connect).</p>, 404);
  return page(
    c,
    'Payout onboarding',
    <>
      <p>
        In test mode no identity documents are needed. Completing marks account {account} as verified with payouts
        enabled; transfers are simulated.
      </p>
      <form method="post" action={`${c.req.path}?sig=${encodeURIComponent(sig)}`}>
        {csrfField(c)}
        <button type="submit">Complete test onboarding</button>
      </form>
    </>,
  );
});

testPaymentsPages.post('/billing/test/connect/:account', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const ctx = c.get('ctx');
  const account = c.req.param('account');
  if ((c.req.query('sig') ?? '') !== connectLinkSig(ctx.secretKey, account))
    return page(c, 'Link invalid', <p>Request a new onboarding link.</p>, 404);
  const r = await applyVerifiedEvent(ctx, testOnboardingDoneEvent(account));
  return r.outcome === 'account_updated'
    ? page(c, 'Onboarding complete', <p>Payouts are enabled for this test account.</p>)
    : page(c, 'Account not found', <p>No such test account.</p>, 404);
});
