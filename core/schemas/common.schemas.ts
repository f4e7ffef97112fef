/** Field shapes every domain's schemas share. */
import { z } from 'zod';

/** Integer cents, the only money type (core/money.ts). */
export const CentsField = z.number().int().min(0).max(100_000_000);
