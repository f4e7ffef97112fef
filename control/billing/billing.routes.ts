/**
 * REST routes of the billing domain (docs/billing.md): balance, packs, checkout, card setup, portal,
 * auto-reload, the Stripe webhook, and the provider's Connect onboarding and payouts. The test-mode pages are
 * control/web/pages/test-payments.tsx.
 */
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { newRouter, type AppEnv } from '../lib/http.js';
import { bearer, jsonBody, jsonResponse, problemResponses } from '../lib/openapi.js';
import { billingStatus, packsView, paymentsPage } from './account.service.js';
import { PageOf, PaginationQuerySchema } from '../../core/schemas/common.schemas.js';
import { startCheckout } from './checkout.service.js';
import {
  AutoReloadInputSchema,
  BalanceSchema,
  CardSetupResultSchema,
  CheckoutInputSchema,
  CheckoutResultSchema,
  ConnectOnboardResultSchema,
  CreditPackListSchema,
  PaymentSchema,
  PortalResultSchema,
  ProviderPayoutsSchema,
  WebhookReceiptSchema,
} from '../../core/schemas/billing.schemas.js';
import { openPortal, setAutoReload, startCardSetup } from './cards.service.js';
import { handleStripeWebhook } from './webhooks.service.js';
import { connectOnboard, toConnectResource } from './connect.service.js';
import { providerPayouts } from './payouts.service.js';
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
    return c.json(await billingStatus(c.get('ctx'), c.get('principal')), 200);
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/billing/packs',
    tags: ['billing'],
    security: bearer,
    responses: {
      200: jsonResponse(CreditPackListSchema, 'Credit packs'),
      ...problemResponses,
    },
  }),
  async (c) => {
    return c.json(packsView(c.get('ctx').config), 200);
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/billing/payments',
    tags: ['billing'],
    security: bearer,
    request: { query: PaginationQuerySchema },
    responses: {
      200: jsonResponse(PageOf(PaymentSchema), 'Payments of the org, newest first, one page'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const { limit, offset } = c.req.valid('query');
    return c.json(await paymentsPage(c.get('ctx').db, c.get('principal'), limit, offset), 200);
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
      201: jsonResponse(CheckoutResultSchema, 'Open checkout_url in a browser to pay'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const ctx = c.get('ctx');
    const body = c.req.valid('json');
    const r = await startCheckout(ctx, c.get('principal'), body, publicBase(c));
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
      201: jsonResponse(CardSetupResultSchema, 'Open setup_url in a browser to confirm a card'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const r = await startCardSetup(c.get('ctx'), c.get('principal'), publicBase(c));
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
      200: jsonResponse(PortalResultSchema, 'Open portal_url in a browser'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const r = await openPortal(c.get('ctx'), c.get('principal'), publicBase(c));
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
    const ctx = c.get('ctx');
    await setAutoReload(ctx, c.get('principal'), c.req.valid('json'));
    return c.json((await billingStatus(ctx, c.get('principal'))).auto_reload, 200);
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
      200: jsonResponse(WebhookReceiptSchema, 'Applied (or already applied)'),
      400: problemResponses[400],
    },
  }),
  async (c) => {
    const raw = await c.req.text();
    const r = await handleStripeWebhook(c.get('ctx'), raw, c.req.header('stripe-signature'));
    return c.json({ received: true, ...r }, 200);
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/connect',
    tags: ['provider'],
    security: bearer,
    responses: {
      200: jsonResponse(ConnectOnboardResultSchema, 'Open onboarding_url in a browser to verify identity'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const r = await connectOnboard(c.get('ctx'), c.get('principal'), publicBase(c));
    return c.json({ onboarding_url: r.url, created: r.created, account: toConnectResource(r.account)! }, 200);
  },
);

billingRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/payouts',
    tags: ['provider'],
    security: bearer,
    responses: {
      200: jsonResponse(ProviderPayoutsSchema, 'Connected account, earnings summary and payouts (newest first)'),
      ...problemResponses,
    },
  }),
  async (c) => {
    return c.json(await providerPayouts(c.get('ctx').db, c.get('principal')), 200);
  },
);
