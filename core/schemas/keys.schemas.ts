/**
 * API keys: the input and output of every key operation (list, create, patch caps, revoke), shared by the REST
 * routes, the services, MCP tools and the CLI. Plain zod: importing this registers nothing.
 */
import { z } from 'zod';
import { ALL_SCOPES } from '../scopes.js';
import { CentsField } from './common.schemas.js';
import { APPROVAL_MODES } from '../enumerations.js';

export const ApprovalModeSchema = z
  .enum(APPROVAL_MODES)
  .meta({ description: 'auto: any endpoint within caps; free_only: price-0 endpoints only' });

export const KeyResourceSchema = z
  .object({
    id: z.string(),
    object: z.literal('api_key'),
    name: z.string(),
    start: z.string().meta({ description: 'First characters of the key, for display' }),
    scopes: z.array(z.enum(ALL_SCOPES)),
    approval_mode: ApprovalModeSchema,
    budget_cents: z.number().int().nullable(),
    per_call_max_cents: z.number().int().nullable(),
    daily_cap_cents: z.number().int().nullable(),
    rate_limit_per_min: z.number().int().nullable(),
    spent_cents: z.number().int(),
    origin: z.enum(['register', 'created', 'oauth', 'admin']),
    created_at: z.string(),
    updated_at: z.string(),
    revoked_at: z.string().nullable(),
    last_used_at: z.string().nullable(),
  })
  .meta({ id: 'ApiKey' });
export type KeyResource = z.infer<typeof KeyResourceSchema>;

/** Spending and rate caps; on a patch, null clears a cap and an absent field leaves it. */
export const KeyCapsSchema = z.object({
  budget_cents: CentsField.nullable().optional().meta({ description: 'Lifetime spend cap in cents; null clears it' }),
  per_call_max_cents: CentsField.nullable()
    .optional()
    .meta({ description: 'Refuse any single call priced above this' }),
  daily_cap_cents: CentsField.nullable().optional().meta({ description: 'Spend cap per UTC day' }),
  approval_mode: ApprovalModeSchema.optional(),
  rate_limit_per_min: z.number().int().min(1).max(1_000_000).nullable().optional(),
});
export type KeyCaps = z.infer<typeof KeyCapsSchema>;

export const KeyNameSchema = z.string().trim().min(1).max(100);

export const CreateKeyInputSchema = z
  .object({
    name: KeyNameSchema,
    scopes: z.array(z.enum(ALL_SCOPES)).min(1).optional().meta({ description: "Defaults to the creator's scopes" }),
    ...KeyCapsSchema.shape,
  })
  .strict();
export type CreateKeyInput = z.infer<typeof CreateKeyInputSchema>;

export const PatchKeyInputSchema = z.object({ name: KeyNameSchema.optional(), ...KeyCapsSchema.shape }).strict();
export type PatchKeyInput = z.infer<typeof PatchKeyInputSchema>;

export const KeyIdSchema = z.string().min(1).max(64);

export const CreatedKeySchema = z.object({
  api_key: z.string().meta({ description: 'The plaintext key, shown only this once' }),
  key: KeyResourceSchema,
});
export type CreatedKey = z.infer<typeof CreatedKeySchema>;
