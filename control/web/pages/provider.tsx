/**
 * The provider area: listings with their state, import from a URL or a file, pricing with pending increases and
 * cancel, credentials (fingerprint only), verify and publish (with the marketplace terms), documents (create,
 * activate), an analytics chart and payout onboarding. Same services and limits as /v1/provider/*.
 */
import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import { getOwnedApi, listEndpoints, pendingChanges } from '../../providers/apis.repo.js';
import { toProviderApiDetail } from '../../providers/apis.serialize.js';
import { createApi, setCredentials } from '../../providers/apis.service.js';
import { publishApi, unpublishApi, verifyApi } from '../../providers/publish.service.js';
import { providerAnalytics } from '../../providers/analytics.service.js';
import { cancelPendingPricing, setPricing } from '../../pricing/pricing.service.js';
import { activateDocument, createDocument, documentPage } from '../../terms/terms.service.js';
import { connectOnboard, payoutAccount } from '../../billing/connect.service.js';
import { publicBaseFor } from '../../billing/billing.routes.js';
import { parseDocumentText } from '../../catalog/openapi-import.js';
import { SvcError } from '../../../core/errors.js';
import { formatCents } from '../../../core/money.js';
import { renderChart } from '../chart.js';
import { pendingPriceText } from '../format.js';
import { csrfField } from '../csrf.js';
import { centsToDollarsInput, dollarsToCents, formString } from '../form.js';
import { renderPage } from '../layout.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { requireWebSession } from '../web-session.js';

export const providerPages = newWebRouter();

const DAY_MS = 86_400_000;
const MAX_UPLOAD_BYTES = 2 * 1024 * 1024;

function Form(props: { c: Context<WebEnv>; action: string; children?: Child; multipart?: boolean; class?: string }) {
  return (
    <form
      class={props.class ?? 'stack'}
      method="post"
      action={props.action}
      enctype={props.multipart ? 'multipart/form-data' : undefined}
    >
      {csrfField(props.c)}
      {props.children}
    </form>
  );
}

providerPages.get('/provider', async (c) => {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const apis = await ctx.db
    .selectFrom('apis')
    .select(['id', 'slug', 'name', 'status', 'suspended_at'])
    .where('org_id', '=', p.orgId)
    .orderBy('created_at', 'desc')
    .execute();
  const now = ctx.clock.now();
  const stats = await providerAnalytics(ctx.db, p, now - 30 * DAY_MS, now);
  const connect = await payoutAccount(ctx.db, p);
  const listings = stats.listings;
  return renderPage(
    c,
    { title: 'Provider area' },
    <>
      <h2>Your listings</h2>
      {apis.length === 0 ? <p>No listings yet: import one below.</p> : null}
      <ul>
        {apis.map((a) => (
          <li>
            <a href={`/provider/apis/${a.id}`}>{a.name}</a>{' '}
            <span class={`tag state-${a.status}`}>{a.suspended_at ? 'suspended' : a.status}</span>
          </li>
        ))}
      </ul>
      <h2>Import an API</h2>
      <Form c={c} action="/provider/apis" multipart>
        <label>
          OpenAPI document URL
          <input type="url" name="openapi_url" placeholder="https://example.com/openapi.json" />
        </label>
        <label>
          Or upload the document (JSON or YAML)
          <input type="file" name="file" accept=".json,.yaml,.yml,application/json" />
        </label>
        <div>
          <button type="submit">Import as draft</button>
        </div>
      </Form>
      <h2>Last 30 days</h2>
      <p>
        {stats.calls} calls from {stats.distinct_consumers} consumers · gross {formatCents(stats.gross_volume_cents)} ·
        net earnings {formatCents(stats.earnings.net_cents)}
      </p>
      {listings.length
        ? renderChart({
            title: 'Gross volume per listing, last 30 days',
            categories: listings.map((l) => l.slug),
            series: [{ name: 'gross', data: listings.map((l) => l.gross_cents) }],
            unit: 'cents',
          })
        : null}
      <h2>Payouts</h2>
      <p>
        {connect
          ? connect.payouts_enabled
            ? 'Payouts are enabled.'
            : 'Onboarding started: finish identity verification to enable payouts.'
          : 'Not set up: payouts need identity verification with the payment processor.'}
      </p>
      <Form c={c} action="/provider/connect" class="">
        <button type="submit">{connect ? 'Continue payout onboarding' : 'Set up payouts'}</button>
      </Form>
    </>,
  );
});

providerPages.post('/provider/apis', async (c) => {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const body = await c.req.parseBody();
  const url = typeof body.openapi_url === 'string' ? body.openapi_url.trim() : '';
  const file = body.file instanceof File && body.file.size > 0 ? body.file : undefined;
  if (!url === !file) throw new SvcError('validation_failed', 'Give either a document URL or a file, not both');
  if (file && file.size > MAX_UPLOAD_BYTES) throw new SvcError('payload_too_large', 'The document is over 2 MB');
  const { apiId } = await createApi(
    ctx,
    p,
    file ? { body: parseDocumentText(await file.text()) } : { openapi_url: url },
  );
  return c.redirect(`/provider/apis/${apiId}`, 303);
});

providerPages.post('/provider/connect', async (c) => {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const base = publicBaseFor(ctx.config, c.req.url);
  const r = await connectOnboard(ctx, p, base);
  if (new URL(r.url).origin === new URL(base).origin)
    return c.redirect(new URL(r.url).pathname + new URL(r.url).search, 303);
  return renderPage(
    c,
    { title: 'Payout onboarding' },
    <p>
      <a class="button" href={r.url}>
        Continue to identity verification
      </a>
    </p>,
  );
});

providerPages.get('/provider/apis/:id', async (c) => {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const api = await getOwnedApi(ctx.db, p.orgId, c.req.param('id'));
  const d = toProviderApiDetail(api, await listEndpoints(ctx.db, api.id), await pendingChanges(ctx.db, api.id));
  const docs = (await documentPage(ctx.db, p, api.id, 100, 0)).data;
  const base = `/provider/apis/${api.id}`;
  return renderPage(
    c,
    { title: d.name },
    <>
      <p>
        <span class={`tag state-${d.status}`}>{d.suspended ? 'suspended' : d.status}</span>{' '}
        {d.status === 'live' ? <a href={`/apis/${d.slug}`}>Public page</a> : 'Draft: only you can see it.'}
      </p>
      <p>{d.summary}</p>
      <h2>Pricing</h2>
      <p class="hint">Dollars per call; 0 is free. A price increase takes effect after the notice period.</p>
      <Form c={c} action={`${base}/pricing`}>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Price ($)</th>
                <th scope="col">Pending increase</th>
              </tr>
            </thead>
            <tbody>
              {d.endpoints
                .filter((e) => !e.removed)
                .map((e) => (
                  <tr>
                    <td>
                      <code>
                        {e.method} {e.path}
                      </code>
                    </td>
                    <td>
                      <input
                        name={`price:${e.endpoint_id}`}
                        aria-label={`Price of ${e.method} ${e.path} in dollars`}
                        inputmode="decimal"
                        value={centsToDollarsInput(e.price_cents)}
                      />
                    </td>
                    <td>{pendingPriceText(e.pending_price)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
        <div>
          <button type="submit">Save prices</button>
        </div>
      </Form>
      {d.endpoints
        .filter((e) => e.pending_price)
        .map((e) => (
          <Form c={c} action={`${base}/pricing/${e.endpoint_id}/cancel`} class="">
            <button class="secondary" type="submit">
              Cancel pending increase of {e.method} {e.path}
            </button>
          </Form>
        ))}
      <h2>Upstream credential</h2>
      <p>
        {d.credentials.set
          ? `Set (${d.credentials.injection}); fingerprint ${d.credentials.fingerprint}.`
          : 'None stored.'}
      </p>
      <Form c={c} action={`${base}/credentials`}>
        <label>
          Secret (sent to your upstream as a bearer token)
          <input type="password" name="secret" autocomplete="off" required />
        </label>
        <div>
          <button type="submit">Store secret</button>
        </div>
      </Form>
      <h2>Terms documents</h2>
      <ul>
        {docs.map((doc) => (
          <li>
            {doc.version} · {doc.acceptance_mode} · {doc.status}{' '}
            {doc.status === 'activated' ? null : (
              <Form c={c} action={`${base}/documents/${doc.document_id}/activate`} class="inline">
                <button class="link" type="submit">
                  Activate {doc.version}
                </button>
              </Form>
            )}
          </li>
        ))}
      </ul>
      <Form c={c} action={`${base}/documents`}>
        <label>
          Version <span class="hint">like 1.0.0</span>
          <input name="version" required pattern="[0-9]+\.[0-9]+\.[0-9]+" />
        </label>
        <label>
          Terms (markdown)
          <textarea name="markdown" rows={6} required></textarea>
        </label>
        <label>
          Acceptance
          <select name="acceptance_mode">
            <option value="required">required before calling</option>
            <option value="optional">optional</option>
          </select>
        </label>
        <div>
          <button type="submit">Create document</button>
        </div>
      </Form>
      <h2>Verify and publish</h2>
      <p>
        Last verification:{' '}
        {d.last_verified_at ? `${d.last_verify_ok ? 'passed' : 'failed'} at ${d.last_verified_at}` : 'never'}
      </p>
      <Form c={c} action={`${base}/verify`} class="">
        <button class="secondary" type="submit">
          Verify upstream now
        </button>
      </Form>
      {d.status === 'live' ? (
        <Form c={c} action={`${base}/unpublish`} class="">
          <button class="danger" type="submit">
            Unpublish
          </button>
        </Form>
      ) : (
        <Form c={c} action={`${base}/publish`}>
          <label class="check">
            <input type="checkbox" name="accept_terms" value="on" required /> I accept the marketplace provider terms
          </label>
          <label class="check">
            <input type="checkbox" name="skip_verify" value="on" /> Skip the upstream check
          </label>
          <div>
            <button type="submit">Publish</button>
          </div>
        </Form>
      )}
    </>,
  );
});

const back = (c: Context<WebEnv>) => c.redirect(`/provider/apis/${c.req.param('id')}`, 303);

providerPages.post('/provider/apis/:id/pricing', async (c) => {
  const p = requireWebSession(c);
  const body = await c.req.parseBody();
  const inputs = Object.entries(body)
    .filter(([k, v]) => k.startsWith('price:') && typeof v === 'string')
    .map(([k, v]) => ({
      endpoint_id: k.slice('price:'.length),
      price_cents: dollarsToCents(k, v as string) ?? 0,
    }));
  await setPricing(c.get('ctx'), p, c.req.param('id'), inputs);
  return back(c);
});

providerPages.post('/provider/apis/:id/pricing/:endpoint/cancel', async (c) => {
  const p = requireWebSession(c);
  await cancelPendingPricing(c.get('ctx'), p, c.req.param('id'), c.req.param('endpoint'));
  return back(c);
});

providerPages.post('/provider/apis/:id/credentials', async (c) => {
  const p = requireWebSession(c);
  const secret = (await formString(c, 'secret')) ?? '';
  if (!secret || secret.length > 4096) throw new SvcError('validation_failed', 'Enter the secret (up to 4096 chars)');
  await setCredentials(c.get('ctx'), p, c.req.param('id'), { secret });
  return back(c);
});

providerPages.post('/provider/apis/:id/documents', async (c) => {
  const p = requireWebSession(c);
  const version = (await formString(c, 'version'))?.trim() ?? '';
  const markdown = (await formString(c, 'markdown')) ?? '';
  const mode = (await formString(c, 'acceptance_mode')) === 'optional' ? 'optional' : 'required';
  if (!/^\d+\.\d+\.\d+$/.test(version))
    throw new SvcError('validation_failed', 'version: three dotted numbers, like 1.0.0');
  if (!markdown.trim() || markdown.length > 200_000)
    throw new SvcError('validation_failed', 'markdown: the terms text is required (up to 200,000 characters)');
  await createDocument(c.get('ctx'), p, {
    kind: 'terms',
    source: 'hosted',
    version,
    markdown,
    api_id: c.req.param('id'),
    acceptance_mode: mode,
  });
  return back(c);
});

providerPages.post('/provider/apis/:id/documents/:doc/activate', async (c) => {
  const p = requireWebSession(c);
  await activateDocument(c.get('ctx'), p, c.req.param('doc'));
  return back(c);
});

providerPages.post('/provider/apis/:id/verify', async (c) => {
  const p = requireWebSession(c);
  await verifyApi(c.get('ctx'), p, c.req.param('id'));
  return back(c);
});

providerPages.post('/provider/apis/:id/publish', async (c) => {
  const p = requireWebSession(c);
  await publishApi(c.get('ctx'), p, c.req.param('id'), {
    accept_terms: (await formString(c, 'accept_terms')) === 'on',
    skip_verify: (await formString(c, 'skip_verify')) === 'on',
  });
  return back(c);
});

providerPages.post('/provider/apis/:id/unpublish', async (c) => {
  const p = requireWebSession(c);
  await unpublishApi(c.get('ctx'), p, c.req.param('id'));
  return back(c);
});
