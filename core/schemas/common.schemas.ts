/** Field shapes every domain's schemas share. */
import { z } from 'zod';

/** Integer cents, the only money type (core/money.ts). */
export const CentsField = z.number().int().min(0).max(100_000_000);

/** A signed sum of cents (totals, net earnings after reversals): still integer cents, may be negative. */
export const CentsAmount = z.number().int();

/** Every timestamp on the wire: ISO 8601 in UTC (`2026-11-23T12:00:00.000Z`); stored as integer ms. */
export const Timestamp = z.iso.datetime();

/** The answer of every list route: one page, and whether another follows (docs/api.md). */
export function PageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), limit: z.number().int(), offset: z.number().int(), has_more: z.boolean() });
}
