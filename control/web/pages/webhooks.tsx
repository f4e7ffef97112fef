/**
 * Dashboard webhooks and alerts (docs/webhooks.md): register an endpoint (its secret shown on that one answer),
 * test-send, see the last deliveries and replay one, enable or delete an endpoint, and set the low-balance threshold
 * and email alerts. The same service calls as /v1/webhooks and /v1/alerts, with the session's principal; forms are
 * parsed with the operation's core schema.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { SvcError } from '../../../core/errors.js';
import { formatCents } from '../../../core/money.js';
import {
  CreateWebhookInputSchema,
  PatchAlertSettingsSchema,
  WEBHOOK_EVENT_TYPES,
  type CreatedWebhook,
} from '../../../core/schemas/webhooks.schemas.js';
import {
  createWebhook,
  deleteWebhook,
  enableWebhook,
  getAlertSettings,
  listDeliveries,
  listWebhooks,
  patchAlertSettings,
  replayDelivery,
  testWebhook,
} from '../../webhooks/webhooks.service.js';
import { csrfField } from '../csrf.js';
import { dollarsToCents } from '../form.js';
import { renderPage } from '../layout.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { DashNav } from './dashboard-nav.js';

export const webhooksPages = newWebRouter();

const PAGE = '/dashboard/webhooks';

// Long: a page: the endpoints read at the top, the rest is the markup of one view (the list, the new-endpoint form, the
// secret shown once).
async function webhooksPage(
  c: Context<WebEnv>,
  extra: { created?: CreatedWebhook; error?: string; url?: string; status?: ContentfulStatusCode } = {},
) {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const endpoints = (await listWebhooks(ctx, p, { limit: 16, offset: 0 })).data;
  const logs = await Promise.all(endpoints.map((e) => listDeliveries(ctx, p, e.id, { limit: 5, offset: 0 })));
  const alerts = await getAlertSettings(ctx, p);
  return renderPage(
    c,
    { title: 'Webhooks and alerts', status: extra.status ?? 200 },
    <>
      <DashNav current={PAGE} />
      {extra.error ? (
        <p class="notice error" role="alert">
          {extra.error}
        </p>
      ) : null}
      {extra.created ? (
        <section class="notice ok" aria-labelledby="new-secret">
          <h2 id="new-secret">Endpoint added</h2>
          <p>Its signing secret is shown only this once: store it where your receiver reads it.</p>
          <p class="secret" data-testid="webhook-secret">
            {extra.created.secret}
          </p>
        </section>
      ) : null}
      <h2>Alerts</h2>
      <form class="stack" method="post" action={`${PAGE}/alerts`}>
        {csrfField(c)}
        <label>
          Low-balance alert below ($){' '}
          <span class="hint">
            empty: 20 % of your last purchase
            {alerts.effective_balance_low_cents !== null
              ? ` (now ${formatCents(alerts.effective_balance_low_cents)})`
              : ''}
          </span>
          <input
            name="balance_low"
            inputmode="decimal"
            value={alerts.balance_low_cents === null ? '' : (alerts.balance_low_cents / 100).toFixed(2)}
          />
        </label>
        <label>
          <input type="checkbox" name="email_alerts" value="on" checked={alerts.email_alerts} /> Email me when the
          balance is low or a key reaches a cap
        </label>
        <div>
          <button type="submit">Save alerts</button>
        </div>
      </form>
      <h2>Add an endpoint</h2>
      <form class="stack" method="post" action={PAGE}>
        {csrfField(c)}
        <label>
          URL <span class="hint">https, answering 2xx within 10 s</span>
          <input name="url" type="url" required maxlength={2048} value={extra.url ?? ''} placeholder="https://" />
        </label>
        <fieldset>
          <legend>Events</legend>
          {WEBHOOK_EVENT_TYPES.map((t) => (
            <label>
              <input type="checkbox" name="events" value={t} /> <code>{t}</code>
            </label>
          ))}
        </fieldset>
        <div>
          <button type="submit">Add endpoint</button>
        </div>
      </form>
      <h2>Endpoints</h2>
      {endpoints.length === 0 ? <p>No endpoints yet.</p> : null}
      {endpoints.map((e, i) => (
        <section class="card" aria-label={`Endpoint ${e.url}`}>
          <h3>
            <code>{e.url}</code> <span class={e.status === 'enabled' ? 'tag state-live' : 'tag'}>{e.status}</span>
          </h3>
          <p class="meta">
            {e.events.join(', ')}
            {e.disabled_reason ? ` · disabled: ${e.disabled_reason}` : ''}
            {e.failing_since ? ` · failing since ${e.failing_since.slice(0, 16).replace('T', ' ')} UTC` : ''}
          </p>
          {(logs[i]?.data.length ?? 0) > 0 ? (
            <table>
              <caption>Last deliveries</caption>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last answer</th>
                  <th scope="col">
                    <span class="visually-hidden">Replay</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {logs[i]!.data.map((d) => (
                  <tr>
                    <td>
                      <code>{d.event_type}</code>
                    </td>
                    <td>{d.status}</td>
                    <td>{d.attempts}</td>
                    <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
                    <td>
                      <form method="post" action={`${PAGE}/deliveries/${d.id}/replay`}>
                        {csrfField(c)}
                        <button type="submit">Replay</button>
                      </form>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          <div class="actions">
            {e.status === 'enabled' ? (
              <form method="post" action={`${PAGE}/${e.id}/test`}>
                {csrfField(c)}
                <button type="submit">Send a test event</button>
              </form>
            ) : (
              <form method="post" action={`${PAGE}/${e.id}/enable`}>
                {csrfField(c)}
                <button type="submit">Enable</button>
              </form>
            )}
            <form method="post" action={`${PAGE}/${e.id}/delete`}>
              {csrfField(c)}
              <button class="danger" type="submit">
                Delete
              </button>
            </form>
          </div>
        </section>
      ))}
      <p class="hint">
        Each request is signed: <code>Svc-Signature: t=…,v1=…</code>, the hex HMAC-SHA256 of <code>t.body</code> with
        the endpoint's secret (Stripe's scheme). Deduplicate on the event <code>id</code>.
      </p>
    </>,
  );
}

/** A refusal comes back to the page with its message; anything else is a real failure. */
async function orPage(c: Context<WebEnv>, act: () => Promise<unknown>, url?: string) {
  try {
    await act();
  } catch (e) {
    if (e instanceof SvcError && e.status < 500)
      return webhooksPage(c, {
        error: e.errors?.[0]?.message ? `${e.detail}: ${e.errors[0].message}` : e.detail,
        status: e.status as ContentfulStatusCode,
        ...(url !== undefined ? { url } : {}),
      });
    throw e;
  }
  return c.redirect(PAGE, 303);
}

webhooksPages.get(PAGE, (c) => webhooksPage(c));

webhooksPages.post(PAGE, async (c) => {
  const p = requireWebSession(c);
  const form = await c.req.parseBody({ all: true });
  const url = typeof form.url === 'string' ? form.url : '';
  const events = ([] as unknown[]).concat(form.events ?? []).filter((v): v is string => typeof v === 'string');
  const parsed = CreateWebhookInputSchema.safeParse({ url, events });
  if (!parsed.success)
    return webhooksPage(c, {
      error: events.length === 0 ? 'Choose at least one event.' : 'Enter an https URL and choose the events.',
      url,
      status: 400,
    });
  try {
    return webhooksPage(c, { created: await createWebhook(c.get('ctx'), p, parsed.data), status: 201 });
  } catch (e) {
    if (e instanceof SvcError && e.status < 500)
      return webhooksPage(c, { error: e.detail, url, status: e.status as ContentfulStatusCode });
    throw e;
  }
});

webhooksPages.post(`${PAGE}/alerts`, async (c) => {
  const p = requireWebSession(c);
  const form = await c.req.parseBody();
  return orPage(c, async () => {
    const low = typeof form.balance_low === 'string' ? form.balance_low : '';
    const input = PatchAlertSettingsSchema.parse({
      balance_low_cents: dollarsToCents('balance_low', low),
      email_alerts: form.email_alerts === 'on',
    });
    await patchAlertSettings(c.get('ctx'), p, input);
  });
});

webhooksPages.post(`${PAGE}/:id/test`, (c) =>
  orPage(c, () => testWebhook(c.get('ctx'), requireWebSession(c), c.req.param('id'))),
);
webhooksPages.post(`${PAGE}/:id/enable`, (c) =>
  orPage(c, () => enableWebhook(c.get('ctx'), requireWebSession(c), c.req.param('id'))),
);
webhooksPages.post(`${PAGE}/:id/delete`, (c) =>
  orPage(c, () => deleteWebhook(c.get('ctx'), requireWebSession(c), c.req.param('id'))),
);
webhooksPages.post(`${PAGE}/deliveries/:id/replay`, (c) =>
  orPage(c, () => replayDelivery(c.get('ctx'), requireWebSession(c), c.req.param('id'))),
);
