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
