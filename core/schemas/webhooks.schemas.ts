/**
 * Outbound webhooks and alert settings (docs/webhooks.md): input and output of every operation, shared by the
 * REST routes, the services, the CLI and the dashboard page. Plain zod: importing this registers nothing.
 */
import { z } from 'zod';
import { CentsField, PageOf } from './common.schemas.js';

/** The events an endpoint can subscribe to. `webhook.test` is sent by a test-send only. */
export const WEBHOOK_EVENT_TYPES = [
  'balance.low',
  'key.cap_reached',
  'payment.succeeded',
  'payout.paid',
  'listing.price_increase_scheduled',
  'terms.updated',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number] | 'webhook.test';

export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);

export const WebhookIdSchema = z.string().min(1).max(64);

export const CreateWebhookInputSchema = z
  .object({
    url: z.string().trim().min(1).max(2048).meta({ description: 'https URL that receives POSTed events' }),
    events: z
      .array(WebhookEventTypeSchema)
      .min(1)
      .max(WEBHOOK_EVENT_TYPES.length)
      .meta({ description: `Event types to send: ${WEBHOOK_EVENT_TYPES.join(', ')}` }),
    description: z.string().trim().max(200).optional(),
  })
  .strict();
export type CreateWebhookInput = z.infer<typeof CreateWebhookInputSchema>;

export const WebhookEndpointSchema = z
  .object({
    id: z.string(),
    object: z.literal('webhook_endpoint'),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(WebhookEventTypeSchema),
    status: z.enum(['enabled', 'disabled']),
    disabled_reason: z.string().nullable(),
    failing_since: z.string().nullable().meta({ description: 'Start of the current run of failed deliveries' }),
    created_at: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;

export const CreatedWebhookSchema = z
  .object({
    id: z.string(),
    secret: z.string().meta({ description: 'Signing secret (whsec_…), shown only this once' }),
    endpoint: WebhookEndpointSchema,
  })
  .meta({ id: 'CreatedWebhook' });
export type CreatedWebhook = z.infer<typeof CreatedWebhookSchema>;

export const WebhookDeliverySchema = z
  .object({
    id: z.string(),
    object: z.literal('webhook_delivery'),
    event_id: z.string(),
    event_type: z.string(),
    endpoint_id: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    next_attempt_at: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    delivered_at: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

export const WebhookEndpointListSchema = PageOf(WebhookEndpointSchema);
export const WebhookDeliveryListSchema = PageOf(WebhookDeliverySchema);

export const AlertSettingsSchema = z
  .object({
    balance_low_cents: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'balance.low threshold; null = 20 % of the last purchase' }),
    effective_balance_low_cents: z.number().int().nullable(),
    email_alerts: z.boolean().meta({ description: 'Mail the org for low balance and caps reached' }),
  })
  .meta({ id: 'AlertSettings' });
export type AlertSettings = z.infer<typeof AlertSettingsSchema>;

export const PatchAlertSettingsSchema = z
  .object({ balance_low_cents: CentsField.nullable().optional(), email_alerts: z.boolean().optional() })
  .strict();
export type PatchAlertSettings = z.infer<typeof PatchAlertSettingsSchema>;
