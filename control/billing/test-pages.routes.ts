/**
 * HTML pages of the local test-payments mode (checkout, card setup, portal, Connect onboarding) and the
 * return page both back-ends send browsers to. Every test page says "TEST MODE - no real money"; they answer
 * 404 when Stripe is configured. Page URLs are capabilities (random refs or HMAC-signed tokens), not sessions.
 */
import type { Context } from 'hono';
import { newRouter, type AppEnv } from '../lib/http.js';
import { formatCents } from '../../core/money.js';
import { findPayment, getAccount, listPayments } from './billing.repo.js';
import { creditPaidPayment } from './checkout.service.js';
import { removeCard, saveCard } from './cards.service.js';
import { completeTestOnboarding } from './connect.service.js';
import { connectLinkSig, testCardOutcome, testPaymentMethodId, verifyPortalToken } from './test-backend.js';

export const testPagesRoutes = newRouter();

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

function page(
  c: Context<AppEnv>,
  title: string,
  body: string,
  status: 200 | 400 | 402 | 404 = 200,
  testBanner = true,
): Response {
  const banner = testBanner
    ? '<p class="banner" role="alert"><strong>TEST MODE - no real money</strong>. Pay with test card 4242 4242 4242 4242 (any future date, any CVC); 4000 0000 0000 0002 is declined.</p>'
    : '';
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem}.banner{background:#fff3cd;border:2px solid #c90;padding:.75rem}label{display:block;margin:.75rem 0}input{font-size:1.1rem;padding:.3rem;width:100%}button{font-size:1.1rem;padding:.4rem 1rem}</style></head>
<body>${banner}<h1>${esc(title)}</h1>${body}</body></html>`;
  return c.html(html, status);
}

const CARD_FORM = (action: string, cta: string) =>
  `<form method="post" action="${esc(action)}"><label>Card number <input name="card" inputmode="numeric" autocomplete="off" placeholder="4242 4242 4242 4242" required></label><label>Expiry <input name="exp" placeholder="12/34"></label><label>CVC <input name="cvc" placeholder="123"></label><button type="submit">${esc(cta)}</button></form>`;

function testOnly(c: Context<AppEnv>): Response | null {
  const { payments, config } = c.get('ctx');
  return payments.kind === 'test' && config.billing.testPaymentsAllowed
    ? null
    : page(c, 'Not found', '<p>Test-payments mode is off on this server.</p>', 404, false);
}

async function cardField(c: Context<AppEnv>): Promise<string> {
  const form = await c.req.parseBody();
  return typeof form.card === 'string' ? form.card : '';
}

testPagesRoutes.get('/billing/return', (c) => {
  const status = c.req.query('status') ?? 'done';
  const text: Record<string, string> = {
    success: 'Payment received. Credits appear on your balance as soon as the payment is confirmed.',
    card_saved: 'Card saved. It can now be used for auto-reload.',
    cancelled: 'Cancelled. Nothing was charged.',
    portal: 'Back from the billing portal.',
    onboarding_done: 'Onboarding submitted. Payouts start once verification completes.',
    onboarding_refresh: 'The onboarding link expired: run `svc provider connect` again for a new one.',
  };
  return page(c, 'svc billing', `<p>${esc(text[status] ?? 'Done.')}</p><p>You can close this window.</p>`, 200, false);
});

testPagesRoutes.get('/billing/test/checkout/:ref', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const p = await findPayment(c.get('ctx').db, { ref: c.req.param('ref') });
  if (!p || p.kind !== 'checkout' || p.processor !== 'test')
    return page(c, 'Checkout not found', '<p>No such test checkout.</p>', 404);
  if (p.status === 'succeeded')
    return page(
      c,
      'Already paid',
      `<p>This checkout was paid: ${formatCents(p.credit_cents)} of credits were added.</p>`,
    );
  return page(
    c,
    'Buy svc credits',
    `<p>Pay <strong>${formatCents(p.amount_paid_cents)}</strong>, receive <strong>${formatCents(p.credit_cents)}</strong> of credits${p.pack_id ? ` (pack ${esc(p.pack_id)})` : ''}.</p>${CARD_FORM(c.req.path, `Pay ${formatCents(p.amount_paid_cents)}`)}`,
  );
});

testPagesRoutes.post('/billing/test/checkout/:ref', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const ctx = c.get('ctx');
  const p = await findPayment(ctx.db, { ref: c.req.param('ref') });
  if (!p || p.kind !== 'checkout' || p.processor !== 'test')
    return page(c, 'Checkout not found', '<p>No such test checkout.</p>', 404);
  const outcome = testCardOutcome(await cardField(c));
  if (outcome === 'unknown')
    return page(c, 'Use a test card', `<p>Only test cards work here.</p>${CARD_FORM(c.req.path, 'Pay')}`, 400);
  if (outcome !== 'ok')
    return page(
      c,
      'Card declined',
      `<p>Your card was declined (test card). Nothing was charged; try 4242 4242 4242 4242.</p>${CARD_FORM(c.req.path, 'Pay')}`,
      402,
    );
  const r = await ctx.db.transaction().execute((trx) => creditPaidPayment(trx, p, ctx.clock.now()));
  return page(
    c,
    'Payment succeeded',
    `<p>${r.applied ? 'Added' : 'Already added'}: <strong>${formatCents(p.credit_cents)}</strong> of test credits. You can close this window.</p>`,
  );
});

testPagesRoutes.get('/billing/test/setup/:ref', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const p = await findPayment(c.get('ctx').db, { ref: c.req.param('ref') });
  if (!p || p.kind !== 'setup' || p.processor !== 'test')
    return page(c, 'Setup not found', '<p>No such test card setup.</p>', 404);
  return page(
    c,
    'Save a card',
    `<p>The card is saved for auto-reload (off-session charges). Test card 4000 0000 0000 0341 saves but its later charges fail.</p>${CARD_FORM(c.req.path, 'Save card')}`,
  );
});

testPagesRoutes.post('/billing/test/setup/:ref', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const ctx = c.get('ctx');
  const p = await findPayment(ctx.db, { ref: c.req.param('ref') });
  if (!p || p.kind !== 'setup' || p.processor !== 'test')
    return page(c, 'Setup not found', '<p>No such test card setup.</p>', 404);
  const digits = (await cardField(c)).replace(/\D/g, '');
  const outcome = testCardOutcome(digits);
  if (outcome === 'unknown')
    return page(c, 'Use a test card', `<p>Only test cards work here.</p>${CARD_FORM(c.req.path, 'Save card')}`, 400);
  if (outcome === 'declined')
    return page(
      c,
      'Card declined',
      `<p>This test card is declined. Try 4242 4242 4242 4242.</p>${CARD_FORM(c.req.path, 'Save card')}`,
      402,
    );
  const acc = await getAccount(ctx.db, p.org_id);
  if (!acc?.customer_id) return page(c, 'Setup not found', '<p>No billing account.</p>', 404);
  const now = ctx.clock.now();
  await ctx.db.transaction().execute(async (trx) => {
    await saveCard(
      trx,
      acc.customer_id!,
      testPaymentMethodId(outcome === 'ok' ? 'ok' : 'attach_then_decline'),
      { brand: 'visa', last4: digits.slice(-4) },
      p.created_at,
      now,
    );
    await trx
      .updateTable('payments')
      .set({ status: 'succeeded', completed_at: now })
      .where('id', '=', p.id)
      .where('status', '=', 'open')
      .execute();
  });
  return page(
    c,
    'Card saved',
    `<p>Visa ending ${esc(digits.slice(-4))} is now on file. You can close this window.</p>`,
  );
});

testPagesRoutes.get('/billing/test/portal/:token', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const ctx = c.get('ctx');
  const orgId = verifyPortalToken(ctx.secretKey, c.req.param('token'), ctx.clock.now());
  if (!orgId)
    return page(
      c,
      'Link expired',
      '<p>This portal link is invalid or expired: request a new one (svc billing portal).</p>',
      404,
    );
  const acc = await getAccount(ctx.db, orgId);
  const payments = await listPayments(ctx.db, orgId, 20);
  const card = acc?.payment_method_id
    ? `Card on file: ${esc(acc.card_brand ?? 'card')} ending ${esc(acc.card_last4 ?? '????')} <form method="post" action="${esc(c.req.path)}/remove-card"><button type="submit">Remove card</button></form>`
    : 'No card on file.';
  const rows = payments
    .map(
      (p) =>
        `<li>${new Date(p.created_at).toISOString().slice(0, 16)} ${esc(p.kind)} ${formatCents(p.amount_paid_cents)} ${esc(p.status)}</li>`,
    )
    .join('');
  return page(
    c,
    'Billing portal',
    `<p>${card}</p><p>Auto-reload: ${acc?.auto_reload_enabled ? `on, below ${formatCents(acc.auto_reload_threshold_cents ?? 0)} add ${formatCents(acc.auto_reload_amount_cents ?? 0)}` : 'off'}.</p><h2>Payments</h2><ul>${rows || '<li>none</li>'}</ul>`,
  );
});

testPagesRoutes.post('/billing/test/portal/:token/remove-card', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const ctx = c.get('ctx');
  const orgId = verifyPortalToken(ctx.secretKey, c.req.param('token'), ctx.clock.now());
  if (!orgId) return page(c, 'Link expired', '<p>This portal link is invalid or expired.</p>', 404);
  await ctx.db.transaction().execute((trx) => removeCard(trx, orgId, ctx.clock.now()));
  return page(c, 'Card removed', '<p>The card was removed and auto-reload turned off.</p>');
});

testPagesRoutes.get('/billing/test/connect/:account', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const account = c.req.param('account');
  const sig = c.req.query('sig') ?? '';
  if (sig !== connectLinkSig(c.get('ctx').secretKey, account))
    return page(c, 'Link invalid', '<p>Request a new onboarding link (svc provider connect).</p>', 404);
  return page(
    c,
    'Payout onboarding',
    `<p>In test mode no identity documents are needed. Completing marks account ${esc(account)} as verified with payouts enabled; transfers are simulated.</p><form method="post" action="${esc(c.req.path)}?sig=${esc(sig)}"><button type="submit">Complete test onboarding</button></form>`,
  );
});

testPagesRoutes.post('/billing/test/connect/:account', async (c) => {
  const off = testOnly(c);
  if (off) return off;
  const ctx = c.get('ctx');
  const account = c.req.param('account');
  if ((c.req.query('sig') ?? '') !== connectLinkSig(ctx.secretKey, account))
    return page(c, 'Link invalid', '<p>Request a new onboarding link.</p>', 404);
  const ok = await completeTestOnboarding(ctx.db, account, ctx.clock.now());
  return ok
    ? page(c, 'Onboarding complete', '<p>Payouts are enabled for this test account.</p>')
    : page(c, 'Account not found', '<p>No such test account.</p>', 404);
});
