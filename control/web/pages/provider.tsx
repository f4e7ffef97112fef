/**
 * The provider area: listings with their state, import from a URL or a file, an analytics chart and payout
 * onboarding. One listing's page is provider-api.tsx, the public profile provider-profile.tsx. Same services and
 * limits as /v1/provider/*.
 */
import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import { createApi } from '../../providers/apis.service.js';
import { providerAnalytics } from '../../providers/analytics.service.js';
import { connectOnboard, payoutAccount } from '../../billing/connect.service.js';
import { publicBaseFor } from '../../billing/billing.routes.js';
import { parseDocumentText } from '../../catalog/openapi-import.js';
import { SvcError } from '../../../core/errors.js';
import { formatCents } from '../../../core/money.js';
import { renderChart } from '../chart.js';
import { csrfField } from '../csrf.js';
import { FieldError, FormErrors, TextField, invalidAttrs } from '../fields.js';
import { fieldErrorsOf, fieldErrorsOfSvc, type FieldErrors, type FieldLabel, type FormState } from '../form.js';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { listOwnedApis } from '../../providers/provider-apis.service.js';
import { ApiCreateInputSchema } from '../../../core/schemas/providers.schemas.js';
import { renderPage } from '../layout.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { requireWebSession } from '../web-session.js';

export const providerPages = newWebRouter();

const DAY_MS = 86_400_000;
const MAX_UPLOAD_BYTES = 2 * 1024 * 1024;

export function Form(props: {
  c: Context<WebEnv>;
  action: string;
  children?: Child;
  multipart?: boolean;
  class?: string;
}) {
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

providerPages.get('/provider', (c) => providerHome(c));

async function providerHome(c: Context<WebEnv>, refused?: FormState, code: ContentfulStatusCode = 200) {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  // One page of 100 listings: a provider with more uses the CLI or REST (paged).
  const apis = (await listOwnedApis(ctx.db, p, 100, 0)).data;
  const now = ctx.clock.now();
  const stats = await providerAnalytics(ctx.db, p, now - 30 * DAY_MS, now);
  const connect = await payoutAccount(ctx.db, p);
  const listings = stats.listings;
  return renderPage(
    c,
    { title: 'Provider area', status: code },
    <>
      <p>
        <a href="/provider/profile">Edit your public profile</a> (the name, bio and links people see on your listings)
      </p>
      <h2>Your listings</h2>
      {apis.length === 0 ? <p>No listings yet: import one below.</p> : null}
      <ul>
        {apis.map((a) => (
          <li>
            <a href={`/provider/apis/${a.api_id}`}>{a.name}</a>{' '}
            <span class={`tag state-${a.status}`}>{a.suspended ? 'suspended' : a.status}</span>
          </li>
        ))}
      </ul>
      <h2 id="import">Import an API</h2>
      <Form c={c} action="/provider/apis" multipart>
        <FormErrors errors={refused?.errors} />
        <TextField
          form="import"
          name="openapi_url"
          label="OpenAPI document URL"
          type="url"
          placeholder="https://example.com/openapi.json"
          state={refused}
        />
        <div class="field">
          <label for="import-file">Or upload the document (JSON or YAML)</label>
          <input
            id="import-file"
            type="file"
            name="file"
            accept=".json,.yaml,.yml,application/json"
            {...invalidAttrs('import', 'file', refused)}
          />
          <FieldError form="import" name="file" state={refused} />
        </div>
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
}

const IMPORT_LABELS: Record<string, FieldLabel> = {
  openapi_url: { label: 'Document URL' },
  body: { label: 'Uploaded document', field: 'file' },
};

providerPages.post('/provider/apis', async (c) => {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const body = await c.req.parseBody();
  const values = { openapi_url: typeof body.openapi_url === 'string' ? body.openapi_url.trim() : '' };
  const file = body.file instanceof File && body.file.size > 0 ? body.file : undefined;
  const refuse = (errors: FieldErrors, code: ContentfulStatusCode = 400) => providerHome(c, { values, errors }, code);
  if (!values.openapi_url && !file)
    return refuse({ openapi_url: 'Enter the URL of your OpenAPI document, or upload the file below.' });
  if (values.openapi_url && file)
    return refuse({
      _form: 'Use one source: clear the URL to upload the file, or leave the file empty to use the URL.',
    });
  if (file && file.size > MAX_UPLOAD_BYTES) return refuse({ file: 'The document is over 2 MB.' }, 413);
  let input: Record<string, unknown>;
  try {
    input = file ? { body: parseDocumentText(await file.text()) } : { openapi_url: values.openapi_url };
  } catch (e) {
    return refuse(fieldErrorsOfSvc(e, IMPORT_LABELS));
  }
  const parsed = ApiCreateInputSchema.safeParse(input);
  if (!parsed.success) return refuse(fieldErrorsOf(parsed.error, IMPORT_LABELS));
  try {
    const { apiId } = await createApi(ctx, p, parsed.data);
    return c.redirect(`/provider/apis/${apiId}`, 303);
  } catch (e) {
    const errors = fieldErrorsOfSvc(e, IMPORT_LABELS);
    return refuse(errors, (e as SvcError).status as ContentfulStatusCode);
  }
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
