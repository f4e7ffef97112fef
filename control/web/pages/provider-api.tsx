/**
 * One listing in the provider area: its public details (name, summary, description, category, upstream base URL),
 * prices with pending increases, the upstream secret (fingerprint only), terms documents, verify and publish.
 * Every form parses with its core schema (`ApiPatchInputSchema`, `PricingInputSchema`, `CredentialsInputSchema`,
 * `TermsDocumentInputSchema`) and a refusal comes back to the same form with the message beside the field.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ownedApiDetail } from '../../providers/provider-apis.service.js';
import { patchApi, setCredentials } from '../../providers/apis.service.js';
import { publishApi, unpublishApi, verifyApi } from '../../providers/publish.service.js';
import { cancelPendingPricing, setPricing } from '../../pricing/pricing.service.js';
import { activateDocument, createDocument, documentPage } from '../../terms/terms.service.js';
import {
  ApiPatchInputSchema,
  CredentialsInputSchema,
  PricingInputSchema,
  type ProviderApiDetail,
} from '../../../core/schemas/providers.schemas.js';
import { TermsDocumentInputSchema } from '../../../core/schemas/terms.schemas.js';
import { FieldError, FormErrors, TextArea, TextField, invalidAttrs, patchOf } from '../fields.js';
import {
  centsToDollarsInput,
  dollarsToCents,
  fieldErrorsOf,
  fieldErrorsOfSvc,
  formObject,
  refusalStatus,
  formString,
  type FieldErrors,
  type FieldLabel,
  type FormState,
} from '../form.js';
import { pendingPriceText, shortTime } from '../format.js';
import { renderPage } from '../layout.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { Form } from './provider.js';

export const providerApiPages = newWebRouter();

type FormName = 'details' | 'pricing' | 'secret' | 'doc';
interface Refused extends FormState {
  form: FormName;
}

const DETAIL_LABELS: Record<string, FieldLabel> = {
  name: { label: 'Name' },
  summary: { label: 'Summary' },
  description: { label: 'Description' },
  category: { label: 'Category' },
  base_url: { label: 'Upstream base URL' },
};
const SECRET_LABELS: Record<string, FieldLabel> = { secret: { label: 'Secret' } };
const DOC_LABELS: Record<string, FieldLabel> = {
  version: { label: 'Version', message: 'Version: three dotted numbers, like 1.0.0.' },
  markdown: { label: 'Terms text' },
  acceptance_mode: { label: 'Acceptance' },
};

providerApiPages.get('/provider/apis/:id', (c) => apiPage(c));

// Long: a page: the listing read at the top, the rest is the markup of its forms (details, pricing, secret, docs,
// terms).
async function apiPage(c: Context<WebEnv>, refused?: Refused, code: ContentfulStatusCode = 200) {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const d = await ownedApiDetail(ctx.db, p, c.req.param('id') ?? '');
  const docs = (await documentPage(ctx.db, p, d.api_id, 100, 0)).data;
  const base = `/provider/apis/${d.api_id}`;
  const st = (form: FormName) => (refused?.form === form ? refused : undefined);
  return renderPage(
    c,
    { title: d.name, status: code },
    <>
      <p>
        <span class={`tag state-${d.status}`}>{d.suspended ? 'suspended' : d.status}</span>{' '}
        {d.status === 'live' ? <a href={`/apis/${d.slug}`}>Public page</a> : 'Draft: only you can see it.'} ·{' '}
        <a href="/provider">All listings</a>
      </p>
      <p>{d.summary}</p>
      <DetailsForm c={c} d={d} base={base} state={st('details')} />
      <PricingForm c={c} d={d} base={base} state={st('pricing')} />
      <h2>Upstream credential</h2>
      <p>
        {d.credentials.set
          ? `Set (${d.credentials.injection}); fingerprint ${d.credentials.fingerprint}.`
          : 'None stored.'}
      </p>
      <Form c={c} action={`${base}/credentials`}>
        <FormErrors errors={st('secret')?.errors} />
        <TextField
          form="secret"
          name="secret"
          label="Secret"
          hint="sent to your upstream as a bearer token; only its fingerprint is shown afterwards"
          type="password"
          state={st('secret') ? { ...st('secret')!, values: {} } : undefined}
        />
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
        <FormErrors errors={st('doc')?.errors} />
        <TextField form="doc" name="version" label="Version" hint="like 1.0.0" state={st('doc')} />
        <TextArea form="doc" name="markdown" label="Terms (markdown)" state={st('doc')} />
        <div class="field">
          <label for="doc-acceptance_mode">Acceptance</label>
          <select
            id="doc-acceptance_mode"
            name="acceptance_mode"
            {...invalidAttrs('doc', 'acceptance_mode', st('doc'))}
          >
            <option value="required" selected={st('doc')?.values.acceptance_mode !== 'optional'}>
              required before calling
            </option>
            <option value="optional" selected={st('doc')?.values.acceptance_mode === 'optional'}>
              optional
            </option>
          </select>
          <FieldError form="doc" name="acceptance_mode" state={st('doc')} />
        </div>
        <div>
          <button type="submit">Create document</button>
        </div>
      </Form>
      <h2>Verify and publish</h2>
      <p>
        Last verification:{' '}
        {d.last_verified_at ? `${d.last_verify_ok ? 'passed' : 'failed'} at ${shortTime(d.last_verified_at)}` : 'never'}
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
}

function DetailsForm(props: { c: Context<WebEnv>; d: ProviderApiDetail; base: string; state?: Refused | undefined }) {
  const { c, d, state } = props;
  return (
    <details open={state !== undefined}>
      <summary>Edit the listing’s name, summary, description, category and upstream</summary>
      <Form c={c} action={`${props.base}/details`}>
        <FormErrors errors={state?.errors} />
        <TextField form="details" name="name" label="Name" value={d.name} maxlength={200} state={state} />
        <TextField
          form="details"
          name="summary"
          label="Summary"
          hint="one line, up to 280 characters"
          value={d.summary}
          maxlength={280}
          state={state}
        />
        <TextArea
          form="details"
          name="description"
          label="Description"
          hint="markdown, up to 10,000 characters"
          value={d.description}
          rows={8}
          state={state}
        />
        <TextField
          form="details"
          name="category"
          label="Category"
          hint="e.g. weather, finance, ai"
          value={d.category}
          maxlength={40}
          state={state}
        />
        <TextField
          form="details"
          name="base_url"
          label="Upstream base URL"
          hint="endpoint paths are relative to it; never shown to consumers"
          type="url"
          value={d.base_url ?? ''}
          state={state}
        />
        <div>
          <button type="submit">Save details</button>
        </div>
      </Form>
    </details>
  );
}

function PricingForm(props: { c: Context<WebEnv>; d: ProviderApiDetail; base: string; state?: Refused | undefined }) {
  const { c, d, state } = props;
  const endpoints = d.endpoints.filter((e) => !e.removed);
  return (
    <>
      <h2>Pricing</h2>
      <p class="hint">Dollars per call; 0 is free. A price increase takes effect after the notice period.</p>
      <Form c={c} action={`${props.base}/pricing`}>
        <FormErrors errors={state?.errors} />
        <div class="table-wrap" tabindex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
          <table>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Price ($)</th>
                <th scope="col">Pending increase</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.map((e) => {
                const name = `price:${e.endpoint_id}`;
                return (
                  <tr>
                    <td>
                      <code>
                        {e.method} {e.path}
                      </code>
                    </td>
                    <td>
                      <input
                        name={name}
                        aria-label={`Price of ${e.method} ${e.path} in dollars`}
                        inputmode="decimal"
                        value={state ? (state.values[name] ?? '') : centsToDollarsInput(e.price_cents)}
                        {...invalidAttrs('pricing', name, state)}
                      />
                      <FieldError form="pricing" name={name} state={state} />
                    </td>
                    <td>{pendingPriceText(e.pending_price)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        <div>
          <button type="submit">Save prices</button>
        </div>
      </Form>
      {endpoints
        .filter((e) => e.pending_price)
        .map((e) => (
          <Form c={c} action={`${props.base}/pricing/${e.endpoint_id}/cancel`} class="">
            <button class="secondary" type="submit">
              Cancel pending increase of {e.method} {e.path}
            </button>
          </Form>
        ))}
    </>
  );
}

const back = (c: Context<WebEnv>) => c.redirect(`/provider/apis/${c.req.param('id')}`, 303);

providerApiPages.post('/provider/apis/:id/details', async (c) => {
  const p = requireWebSession(c);
  const values = await formObject(c);
  const patch = patchOf(
    values,
    ['name', 'summary', 'description', 'category', 'base_url'],
    { summary: '', description: '' },
    ['description'],
  );
  const parsed = ApiPatchInputSchema.safeParse(patch);
  if (!parsed.success)
    return apiPage(c, { form: 'details', values, errors: fieldErrorsOf(parsed.error, DETAIL_LABELS) }, 400);
  try {
    await patchApi(c.get('ctx'), p, c.req.param('id'), parsed.data);
  } catch (e) {
    return apiPage(c, { form: 'details', values, errors: fieldErrorsOfSvc(e, DETAIL_LABELS) }, refusalStatus(e));
  }
  return back(c);
});

providerApiPages.post('/provider/apis/:id/pricing', async (c) => {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const values = await formObject(c);
  const d = await ownedApiDetail(ctx.db, p, c.req.param('id'));
  const routeOf = new Map(d.endpoints.map((e) => [e.endpoint_id, `${e.method} ${e.path}`]));
  const errors: FieldErrors = {};
  const endpoints: Array<{ endpoint_id: string; price_cents: number }> = [];
  for (const [k, v] of Object.entries(values)) {
    if (!k.startsWith('price:')) continue;
    const endpoint_id = k.slice('price:'.length);
    try {
      endpoints.push({ endpoint_id, price_cents: dollarsToCents(k, v) ?? 0 });
    } catch {
      errors[k] = `Price of ${routeOf.get(endpoint_id) ?? 'this endpoint'}: enter dollars, like 0.02.`;
    }
  }
  const parsed = PricingInputSchema.safeParse({ endpoints });
  if (!parsed.success)
    for (const issue of parsed.error.issues) {
      const i = typeof issue.path[1] === 'number' ? endpoints[issue.path[1]] : undefined;
      const field = i ? `price:${i.endpoint_id}` : '_form';
      errors[field] ??= i
        ? `Price of ${routeOf.get(i.endpoint_id) ?? 'this endpoint'}: at most $1000000.00 a call.`
        : 'There are no endpoints to price.';
    }
  if (Object.keys(errors).length > 0) return apiPage(c, { form: 'pricing', values, errors }, 400);
  try {
    await setPricing(ctx, p, c.req.param('id'), endpoints);
  } catch (e) {
    return apiPage(c, { form: 'pricing', values, errors: fieldErrorsOfSvc(e, {}) }, refusalStatus(e));
  }
  return back(c);
});

providerApiPages.post('/provider/apis/:id/pricing/:endpoint/cancel', async (c) => {
  const p = requireWebSession(c);
  await cancelPendingPricing(c.get('ctx'), p, c.req.param('id'), c.req.param('endpoint'));
  return back(c);
});

providerApiPages.post('/provider/apis/:id/credentials', async (c) => {
  const p = requireWebSession(c);
  const parsed = CredentialsInputSchema.safeParse({ secret: (await formString(c, 'secret')) ?? '' });
  // The secret is never sent back to the page, even on a refusal.
  if (!parsed.success)
    return apiPage(c, { form: 'secret', values: {}, errors: fieldErrorsOf(parsed.error, SECRET_LABELS) }, 400);
  try {
    await setCredentials(c.get('ctx'), p, c.req.param('id'), parsed.data);
  } catch (e) {
    return apiPage(c, { form: 'secret', values: {}, errors: fieldErrorsOfSvc(e, SECRET_LABELS) }, refusalStatus(e));
  }
  return back(c);
});

providerApiPages.post('/provider/apis/:id/documents', async (c) => {
  const p = requireWebSession(c);
  const values = await formObject(c);
  const parsed = TermsDocumentInputSchema.safeParse({
    kind: 'terms',
    source: 'hosted',
    version: (values.version ?? '').trim(),
    markdown: values.markdown ?? '',
    api_id: c.req.param('id'),
    acceptance_mode: values.acceptance_mode,
  });
  if (!parsed.success) return apiPage(c, { form: 'doc', values, errors: fieldErrorsOf(parsed.error, DOC_LABELS) }, 400);
  try {
    await createDocument(c.get('ctx'), p, {
      ...parsed.data,
      acceptance_mode: parsed.data.acceptance_mode ?? 'required',
    });
  } catch (e) {
    return apiPage(c, { form: 'doc', values, errors: fieldErrorsOfSvc(e, DOC_LABELS) }, refusalStatus(e));
  }
  return back(c);
});

providerApiPages.post('/provider/apis/:id/documents/:doc/activate', async (c) => {
  const p = requireWebSession(c);
  await activateDocument(c.get('ctx'), p, c.req.param('doc'));
  return back(c);
});

providerApiPages.post('/provider/apis/:id/verify', async (c) => {
  const p = requireWebSession(c);
  await verifyApi(c.get('ctx'), p, c.req.param('id'));
  return back(c);
});

providerApiPages.post('/provider/apis/:id/publish', async (c) => {
  const p = requireWebSession(c);
  await publishApi(c.get('ctx'), p, c.req.param('id'), {
    accept_terms: (await formString(c, 'accept_terms')) === 'on',
    skip_verify: (await formString(c, 'skip_verify')) === 'on',
  });
  return back(c);
});

providerApiPages.post('/provider/apis/:id/unpublish', async (c) => {
  const p = requireWebSession(c);
  await unpublishApi(c.get('ctx'), p, c.req.param('id'));
  return back(c);
});
