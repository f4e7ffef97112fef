/** `svc webhooks create --url --events`: registers an endpoint; its signing secret is printed once. */
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { usageError } from '../../failure.js';
import { CreatedWebhookSchema, WEBHOOK_EVENT_TYPES } from '../../../core/schemas/webhooks.schemas.js';

export default svcCommand({
  meta: { name: 'create', description: 'Register an endpoint (its signing secret is shown once)' },
  args: {
    url: { type: 'string', required: true, description: 'https URL that receives the events' },
    events: { type: 'string', required: true, description: `Comma-separated: ${WEBHOOK_EVENT_TYPES.join(',')}` },
    description: { type: 'string', description: 'A note for yourself' },
  },
  examples: ['svc webhooks create --url https://example.com/svc --events balance.low,key.cap_reached'],
  async run({ args }) {
    const events = args.events
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const bad = events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
    if (events.length === 0 || bad.length)
      throw usageError(`unknown event ${bad.join(', ') || '(none)'}; choose from ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    const description = args.description;
    const r = await api('POST', '/v1/webhooks', CreatedWebhookSchema, {
      body: { url: args.url, events, ...(description ? { description } : {}) },
    });
    return {
      data: r,
      human: [
        r.secret,
        `Webhook ${r.id} created. The signing secret above is shown once: store it where your receiver reads it.`,
        'Verify each request: Svc-Signature is t=<unix>,v1=<hex HMAC-SHA256 of "t.body" with the secret>.',
        `Try it: svc webhooks test ${r.id}`,
      ].join('\n'),
    };
  },
});
