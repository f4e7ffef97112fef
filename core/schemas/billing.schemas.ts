/**
 * Billing operations' input and output, shared by the REST routes, the services, MCP tools and the CLI. Plain zod:
 * importing this registers nothing. (Auto-reload first; the other billing shapes move here as they are typed.)
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
