/**
 * Billing operations' input and output, shared by the REST routes, the services, MCP tools and the CLI. Plain zod:
 * importing this registers nothing.
 */
import { z } from 'zod';

const ReloadCents = (min: number) => z.number().int().min(min).max(10_000_000);

/**
 * `threshold_cents` / `amount_cents`, like every other money field. `threshold` / `amount` are the deprecated
 * spellings from before; still accepted (docs/billing.md), refused only when both spellings disagree.
 */
export const AutoReloadInputSchema = z
  .object({
    enabled: z.boolean(),
    threshold_cents: ReloadCents(0).optional().meta({ description: 'Reload when credit_cents falls below this' }),
    amount_cents: ReloadCents(1).optional().meta({ description: 'Charged to the saved card and credited per reload' }),
    threshold: ReloadCents(0).optional().meta({ description: 'Deprecated: use threshold_cents', deprecated: true }),
    amount: ReloadCents(1).optional().meta({ description: 'Deprecated: use amount_cents', deprecated: true }),
  })
  .strict();
export type AutoReloadInput = z.infer<typeof AutoReloadInputSchema>;

/** POST /v1/billing/checkout and the create_checkout tool: a pack, or a custom amount within the configured bounds. */
export const CheckoutInputSchema = z
  .object({
    pack: z
      .string()
      .min(1)
      .max(40)
      .optional()
      .meta({ description: 'A pack id (GET /v1/billing/packs): starter, standard or pro by default' }),
    amount_cents: z
      .number()
      .int()
      .min(1)
      .max(100_000_000)
      .optional()
      .meta({ description: 'Custom amount, credited 1:1, within the configured min/max' }),
  })
  .strict();
export type CheckoutInput = z.infer<typeof CheckoutInputSchema>;

// Outputs of the billing operations (REST answers; get_balance and the billing tools).

export const CreditPackSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    price_cents: z.number().int(),
    credit_cents: z.number().int(),
    bonus_cents: z.number().int(),
  })
  .meta({ id: 'CreditPack' });

/** GET /v1/billing/packs: the packs on sale and the bounds of a custom amount. */
export const CreditPackListSchema = z.object({
  data: z.array(CreditPackSchema),
  custom_amount: z.object({ min_cents: z.number().int(), max_cents: z.number().int() }),
});

/** GET /v1/billing/balance and get_balance. */
export const BalanceSchema = z
  .object({
    org_id: z.string(),
    credit_cents: z.number().int().meta({ description: 'Settled credits, including reserved' }),
    pending_cents: z
      .number()
      .int()
      .meta({ description: 'Withheld credits (signup credit awaiting email verification)' }),
    reserved_cents: z
      .number()
      .int()
      .meta({ description: 'Part of credit_cents leased to gateways for in-flight calls' }),
    available_cents: z.number().int(),
    payments_mode: z.enum(['stripe', 'test', 'disabled']).meta({
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
  .meta({ id: 'Balance' });
export type Balance = z.infer<typeof BalanceSchema>;

export const PaymentSchema = z
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
  .meta({ id: 'Payment' });
export type Payment = z.infer<typeof PaymentSchema>;

/** POST /v1/billing/checkout: a person opens checkout_url to pay. */
export const CheckoutResultSchema = z.object({
  payment_id: z.string(),
  checkout_url: z.string(),
  mode: z.enum(['stripe', 'test']),
  pack: z.string().nullable(),
  amount_cents: z.number().int(),
  credit_cents: z.number().int(),
});

/** POST /v1/billing/setup: a person opens setup_url to save a card. */
export const CardSetupResultSchema = z.object({
  setup_id: z.string(),
  setup_url: z.string(),
  mode: z.enum(['stripe', 'test']),
});

/** POST /v1/billing/portal: a person opens portal_url to manage cards and invoices. */
export const PortalResultSchema = z.object({ portal_url: z.string(), mode: z.enum(['stripe', 'test']) });

/** POST /v1/billing/webhooks/stripe: what the signed event did (a redelivery is a duplicate). */
export const WebhookReceiptSchema = z.object({
  received: z.boolean(),
  event_id: z.string(),
  duplicate: z.boolean(),
  outcome: z.string(),
});

export const ConnectAccountSchema = z
  .object({
    account_id: z.string(),
    processor: z.enum(['stripe', 'test']),
    details_submitted: z.boolean(),
    payouts_enabled: z.boolean(),
  })
  .meta({ id: 'ConnectAccount' });

/** POST /v1/provider/connect: a person opens onboarding_url to verify identity for payouts. */
export const ConnectOnboardResultSchema = z.object({
  onboarding_url: z.string(),
  created: z.boolean(),
  account: ConnectAccountSchema,
});

export const PayoutSchema = z
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
  .meta({ id: 'Payout' });

/** GET /v1/provider/payouts: the connected account, earnings summary and payouts (newest first). */
export const ProviderPayoutsSchema = z.object({
  account: ConnectAccountSchema.nullable(),
  earnings: z.object({
    gross_cents: z.number().int(),
    fee_cents: z.number().int(),
    net_earned_cents: z.number().int(),
    paid_out_cents: z.number().int(),
    available_cents: z.number().int(),
  }),
  payouts: z.array(PayoutSchema),
});
export type ProviderPayouts = z.infer<typeof ProviderPayoutsSchema>;
