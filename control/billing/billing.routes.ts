/**
 * REST routes of the billing domain (docs/billing.md): balance, packs, checkout, card setup, portal,
 * auto-reload, the Stripe webhook, and the provider's Connect onboarding and payouts. The test-mode pages are
 * control/web/pages/test-payments.tsx.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { newRouter, type AppEnv } from '../lib/http.js';
import { bearer, jsonBody, jsonResponse, problemResponses } from '../lib/openapi.js';
import { requireAuth, requireScope } from '../auth/rest-auth.js';
import { billingStatus, packsView } from './billing.views.js';
import { iso, listPayments } from './billing.repo.js';
import { PageOf, PaginationQuery, pageOf } from '../lib/pagination.js';
import { startCheckout } from './checkout.service.js';
import { AutoReloadInputSchema, CheckoutInputSchema } from '../../core/schemas/billing.schemas.js';
import { openPortal, setAutoReload, startCardSetup } from './cards.service.js';
import { handleStripeWebhook } from './webhooks.service.js';
import { connectOnboard, toConnectResource } from './connect.service.js';
import { providerPayouts } from './payouts.service.js';
import type { Row } from '../../core/db/database.js';
import type { Config } from '../../core/config.js';

export const billingRoutes = newRouter();

/** Public origin for return pages and test-mode pages: SVC_PUBLIC_URL, else the address this request reached. */
export function publicBase(c: Context<AppEnv>): string {
  return publicBaseFor(c.get('ctx').config, c.req.url);
}

/** publicBase for callers that hold the config and the request URL (the web pages). */
export function publicBaseFor(config: Readonly<Config>, requestUrl: string): string {
  // Port 0 (tests) has no meaningful configured URL: use the origin this request reached.
  if (config.urls.control.endsWith(':0')) return new URL(requestUrl).origin;
  return config.urls.control.replace(/\/$/, '');
}

const PackSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    price_cents: z.number().int(),
    credit_cents: z.number().int(),
    bonus_cents: z.number().int(),
  })
  .openapi('CreditPack');

const BalanceSchema = z
  .object({
    org_id: z.string(),
    credit_cents: z.number().int().openapi({ description: 'Settled credits, including reserved' }),
    pending_cents: z
      .number()
      .int()
      .openapi({ description: 'Withheld credits (signup credit awaiting email verification)' }),
    reserved_cents: z
      .number()
      .int()
      .openapi({ description: 'Part of credit_cents leased to gateways for in-flight calls' }),
    available_cents: z.number().int(),
    payments_mode: z.enum(['stripe', 'test', 'disabled']).openapi({
      description: 'disabled: no Stripe key and test payments refused (production without SVC_TEST_PAYMENTS)',
    }),
    card_on_file: z.boolean(),
    card: z.object({ brand: z.string().nullable(), last4: z.string().nullable() }).nullable(),
    auto_reload: z.object({
      enabled: z.boolean(),
      threshold_cents: z.number().int().nullable(),
      amount_cents: z.number().int().nullable(),
      failures: z.number().int(),
      paused: z.boolean(),
    }),
  })
  .openapi('Balance');

const PaymentSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['checkout', 'auto_reload', 'setup']),
    processor: z.enum(['stripe', 'test']),
    status: z.enum(['open', 'succeeded', 'failed', 'expired']),
    pack: z.string().nullable(),
    amount_cents: z.number().int(),
    credit_cents: z.number().int(),
    failure_reason: z.string().nullable(),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .openapi('Payment');

function toPayment(p: Row<'payments'>): z.infer<typeof PaymentSchema> {
  return {
    id: p.id,
    kind: p.kind,
    processor: p.processor,
    status: p.status,
    pack: p.pack_id,
    amount_cents: p.amount_paid_cents,
    credit_cents: p.credit_cents,
    failure_reason: p.failure_reason,
    created_at: iso(p.created_at)!,
    completed_at: iso(p.completed_at),
  };
}

billingRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/billing/balance',
    tags: ['billing'],
    security: bearer,
    responses: {
      200: jsonResponse(BalanceSchema, 'Credits, reservations, card on file and auto-reload'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireAuth(c);
    return c.json(await billingStatus(c.get('ctx'), p.orgId), 200);
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/billing/packs',
    tags: ['billing'],
    security: bearer,
    responses: {
      200: jsonResponse(
        z.object({
          data: z.array(PackSchema),
          custom_amount: z.object({ min_cents: z.number().int(), max_cents: z.number().int() }),
        }),
        'Credit packs',
      ),
      ...problemResponses,
    },
  }),
  async (c) => {
    requireAuth(c);
    return c.json(packsView(c.get('ctx').config), 200);
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/billing/payments',
    tags: ['billing'],
    security: bearer,
    request: { query: PaginationQuery },
    responses: {
      200: jsonResponse(PageOf(PaymentSchema), 'Payments of the org, newest first, one page'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireAuth(c);
    const { limit, offset } = c.req.valid('query');
    const rows = await listPayments(c.get('ctx').db, p.orgId, limit + 1, offset);
    return c.json(pageOf(rows.map(toPayment), limit, offset), 200);
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/billing/checkout',
    tags: ['billing'],
    security: bearer,
    request: jsonBody(CheckoutInputSchema),
    responses: {
      201: jsonResponse(
        z.object({
          payment_id: z.string(),
          checkout_url: z.string(),
          mode: z.enum(['stripe', 'test']),
          pack: z.string().nullable(),
          amount_cents: z.number().int(),
          credit_cents: z.number().int(),
        }),
        'Open checkout_url in a browser to pay',
      ),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireScope(c, 'billing:write');
    const ctx = c.get('ctx');
    const body = c.req.valid('json');
    const r = await startCheckout(ctx, p.orgId, body, publicBase(c));
    return c.json(
      {
        payment_id: r.payment.id,
        checkout_url: r.url,
        mode: ctx.payments.kind,
        pack: r.priced.pack?.id ?? null,
        amount_cents: r.priced.amountCents,
        credit_cents: r.priced.creditCents,
      },
      201,
    );
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/billing/setup',
    tags: ['billing'],
    security: bearer,
    responses: {
      201: jsonResponse(
        z.object({ setup_id: z.string(), setup_url: z.string(), mode: z.enum(['stripe', 'test']) }),
        'Open setup_url in a browser to confirm a card',
      ),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireScope(c, 'billing:write');
    const r = await startCardSetup(c.get('ctx'), p.orgId, publicBase(c));
    return c.json({ setup_id: r.payment.id, setup_url: r.url, mode: c.get('ctx').payments.kind }, 201);
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/billing/portal',
    tags: ['billing'],
    security: bearer,
    responses: {
      200: jsonResponse(
        z.object({ portal_url: z.string(), mode: z.enum(['stripe', 'test']) }),
        'Open portal_url in a browser',
      ),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireScope(c, 'billing:write');
    const r = await openPortal(c.get('ctx'), p.orgId, publicBase(c));
    return c.json({ portal_url: r.url, mode: c.get('ctx').payments.kind }, 200);
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/billing/auto-reload',
    tags: ['billing'],
    security: bearer,
    request: jsonBody(AutoReloadInputSchema),
    responses: { 200: jsonResponse(BalanceSchema.shape.auto_reload, 'Auto-reload settings now'), ...problemResponses },
  }),
  async (c) => {
    const p = requireScope(c, 'billing:write');
    const ctx = c.get('ctx');
    await setAutoReload(ctx, p.orgId, c.req.valid('json'));
    return c.json((await billingStatus(ctx, p.orgId)).auto_reload, 200);
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/billing/webhooks/stripe',
    tags: ['billing'],
    description:
      'Stripe webhook endpoint. No bearer auth: the Stripe-Signature header is verified against SVC_STRIPE_WEBHOOK_SECRET.',
    responses: {
      200: jsonResponse(
        z.object({ received: z.boolean(), event_id: z.string(), duplicate: z.boolean(), outcome: z.string() }),
        'Applied (or already applied)',
      ),
      400: problemResponses[400],
    },
  }),
  async (c) => {
    const raw = await c.req.text();
    const r = await handleStripeWebhook(c.get('ctx'), raw, c.req.header('stripe-signature'));
    return c.json({ received: true, ...r }, 200);
  },
);

const ConnectSchema = z
  .object({
    account_id: z.string(),
    processor: z.enum(['stripe', 'test']),
    details_submitted: z.boolean(),
    payouts_enabled: z.boolean(),
  })
  .openapi('ConnectAccount');

billingRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/connect',
    tags: ['provider'],
    security: bearer,
    responses: {
      200: jsonResponse(
        z.object({ onboarding_url: z.string(), created: z.boolean(), account: ConnectSchema }),
        'Open onboarding_url in a browser to verify identity',
      ),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    const r = await connectOnboard(c.get('ctx'), p.orgId, publicBase(c));
    return c.json({ onboarding_url: r.url, created: r.created, account: toConnectResource(r.account)! }, 200);
  },
);

const PayoutSchema = z
  .object({
    id: z.string(),
    period: z.string(),
    amount_cents: z.number().int(),
    status: z.enum(['pending', 'paid', 'failed']),
    transfer_id: z.string().nullable(),
    failure_reason: z.string().nullable(),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .openapi('Payout');

billingRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/payouts',
    tags: ['provider'],
    security: bearer,
    responses: {
      200: jsonResponse(
        z.object({
          account: ConnectSchema.nullable(),
          earnings: z.object({
            gross_cents: z.number().int(),
            fee_cents: z.number().int(),
            net_earned_cents: z.number().int(),
            paid_out_cents: z.number().int(),
            available_cents: z.number().int(),
          }),
          payouts: z.array(PayoutSchema),
        }),
        'Connected account, earnings summary and payouts (newest first)',
      ),
      ...problemResponses,
    },
  }),
  async (c) => {
    const p = requireScope(c, 'provider:write');
    return c.json(await providerPayouts(c.get('ctx').db, p.orgId), 200);
  },
);
