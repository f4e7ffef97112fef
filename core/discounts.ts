/**
 * Volume discounts: the one pricing rule shared by the catalog (quotes, schema) and the gateway (charges).
 * Tiers are per endpoint and per consumer org per UTC calendar month; see control/pricing/README.md.
 */
import { z } from 'zod';

export const DiscountTierSchema = z.object({
  /** The tier applies once the org has already made this many calls to the endpoint this month. */
  min_calls: z.number().int().min(1).max(1_000_000_000),
  /** Whole percent off the base price, 1..100. */
  percent_off: z.number().int().min(1).max(100),
});

export const DiscountTiersSchema = z
  .array(DiscountTierSchema)
  .max(10)
  .refine((tiers) => tiers.every((t, i) => i === 0 || t.min_calls > tiers[i - 1]!.min_calls), {
    message: 'tiers must be sorted by strictly increasing min_calls',
  });

export type DiscountTier = z.infer<typeof DiscountTierSchema>;

export function parseDiscounts(json: string): DiscountTier[] {
  const parsed = DiscountTiersSchema.safeParse(JSON.parse(json));
  return parsed.success ? parsed.data : [];
}

/**
 * Price in cents of the next call, given the calls this org already made to the endpoint this month.
 * Discount cents are rounded down (floor), so the consumer never pays a fraction and the provider never loses one
 * to rounding: price = base - floor(base * percent_off / 100).
 */
export function priceForNextCall(baseCents: number, tiers: readonly DiscountTier[], callsThisMonth: number): number {
  let pct = 0;
  for (const t of tiers) if (callsThisMonth >= t.min_calls) pct = t.percent_off;
  return baseCents - Math.floor((baseCents * pct) / 100);
}
