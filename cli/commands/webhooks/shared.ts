/** What the webhook commands share: the endpoint and delivery tables, and the id argument. */
export const ENDPOINT_COLUMNS = ['id', 'url', 'events', 'status', 'failing_since', 'created_at'];
export const DELIVERY_COLUMNS = [
  'id',
  'event_type',
  'status',
  'attempts',
  'last_status_code',
  'last_error',
  'created_at',
];
export const idArg = {
  id: { type: 'positional', required: true, description: 'Webhook endpoint id (whe_…)' },
} as const;
