/**
 * The web console ("Try it" on a listing page, control/console/console.service.ts): one operation, a free quote or a
 * call of one endpoint through the real gateway with the org's console key. Plain zod: importing this registers
 * nothing. The page turns its form into this object (control/web/pages/listing-console.tsx).
 */
import { z } from 'zod';
import { CentsField } from './common.schemas.js';

/** Values typed into the form, by parameter name (path, query or header parameters of the endpoint). */
const ParamValues = z.record(z.string().max(200), z.string().max(4000)).default({});

export const CONSOLE_ACTIONS = ['quote', 'send'] as const;

/** Largest request body the console sends (characters typed into the body field). */
export const CONSOLE_MAX_BODY_CHARS = 64 * 1024;

export const ConsoleCallInputSchema = z
  .object({
    slug: z.string().min(1).max(200),
    endpoint_id: z.string().min(1).max(64),
    action: z.enum(CONSOLE_ACTIONS).meta({ description: 'quote: the price and whether it would pass; send: call' }),
    path: ParamValues,
    query: ParamValues,
    headers: ParamValues,
    body: z.string().max(CONSOLE_MAX_BODY_CHARS).optional(),
    /** The quoted price the person saw: the gateway refuses (uncharged) a call that now costs more. */
    max_price_cents: CentsField.optional(),
    /** One per rendered form: sent as the Idempotency-Key, so a resubmitted form is not charged twice. */
    attempt: z
      .string()
      .regex(/^[A-Za-z0-9_-]{16,64}$/)
      .optional(),
    /** The console key's daily cap, set by the person when the key is first created; null means no cap. */
    daily_cap_cents: CentsField.nullable().optional(),
  })
  .strict();
export type ConsoleCallInput = z.infer<typeof ConsoleCallInputSchema>;

/** Changing the console key's daily cap from the console (null: no cap). */
export const ConsoleCapInputSchema = z.object({ daily_cap_cents: CentsField.nullable() }).strict();
export type ConsoleCapInput = z.infer<typeof ConsoleCapInputSchema>;

export const ConsoleKeyViewSchema = z.object({
  key_id: z.string(),
  name: z.string(),
  start: z.string().meta({ description: 'First characters of the key, for display (never the key)' }),
  daily_cap_cents: z.number().int().nullable(),
  spent_today_cents: z.number().int(),
});
export type ConsoleKeyView = z.infer<typeof ConsoleKeyViewSchema>;

export const ConsoleQuoteSchema = z.object({
  kind: z.literal('quote'),
  price_cents: z.number().int(),
  would_pass: z.boolean(),
  code: z.string().nullable(),
  detail: z.string().nullable(),
  balance_cents: z.number().int(),
});

export const ConsoleCallResultSchema = z.object({
  kind: z.literal('call'),
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  /** Pretty-printed when the body is JSON; base64 for a binary body; at most CONSOLE_SHOWN_BODY_CHARS. */
  body: z.string(),
  body_encoding: z.enum(['utf8', 'base64']),
  body_truncated: z.boolean(),
  body_bytes: z.number().int(),
  /** Set when the gateway itself refused (our problem+json: code and detail), not the provider. */
  refusal: z.object({ code: z.string(), detail: z.string() }).nullable(),
  request_id: z.string().nullable(),
  price_cents: z.number().int().nullable(),
  charged_cents: z.number().int(),
  balance_cents: z.number().int().nullable(),
  idempotent_replay: z.boolean(),
});

export const ConsoleResultSchema = z.discriminatedUnion('kind', [ConsoleQuoteSchema, ConsoleCallResultSchema]);
export type ConsoleResult = z.infer<typeof ConsoleResultSchema>;
export type ConsoleCallResult = z.infer<typeof ConsoleCallResultSchema>;
