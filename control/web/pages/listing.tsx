/**
 * A listing's public page: summary, provider, endpoints with prices and pending increases, schemas, stats with
 * charts, ranks, terms (markdown, with accept for an org owner/admin) and copy-ready snippets (curl, svc, MCP).
 */
import type { Context } from 'hono';
import { getVisibleListing } from '../../catalog/listings.repo.js';
import { listingDetail, listingRanks, listingSchema, listingStats } from '../../catalog/inspect.service.js';
import { acceptListingTerms, activeDocument, listingTerms, mayAcceptTerms } from '../../terms/terms.service.js';
import { formatCents } from '../../../core/money.js';
import { renderChart } from '../chart.js';
import { pendingPriceText } from '../format.js';
import { csrfField } from '../csrf.js';
import { formString } from '../form.js';
import { renderPage } from '../layout.js';
import { renderMarkdown } from '../markdown.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ConsoleCallInputSchema, ConsoleCapInputSchema } from '../../../core/schemas/console.schemas.js';
import { consoleView, runConsole, setConsoleDailyCap } from '../../console/console.service.js';
import { formObject, moneyFields, type FieldErrors } from '../form.js';
import { CONSOLE_JS_HREF } from '../assets/assets.routes.js';
import { ConsoleSection, consoleErrors, consoleFormInput, type ConsoleState } from './listing-console.js';

export const listingPages = newWebRouter();

const json = (v: unknown) => (v === null || v === undefined ? 'none' : JSON.stringify(v, null, 2));

async function TermsSection(props: { c: Context<WebEnv>; apiId: string; slug: string }) {
  const { c } = props;
  const { db } = c.get('ctx');
  const doc = await activeDocument(db, props.apiId);
  if (!doc) return <p>No terms: calling this API needs no acceptance.</p>;
  const session = c.get('webSession');
  const mine = session ? await listingTerms(db, session.principal, props.slug) : undefined;
  const accepted = mine?.accepted_at ? { accepted_at: Date.parse(mine.accepted_at) } : undefined;
  const canAccept = session && mayAcceptTerms(session.principal);
  return (
    <>
      <p>
        Version {doc.version} · acceptance {doc.acceptance_mode}
        {accepted ? ` · accepted by your org on ${new Date(accepted.accepted_at).toISOString().slice(0, 10)}` : ''}
      </p>
      <details open={doc.acceptance_mode === 'required' && !accepted}>
        <summary>Read the terms</summary>
        {renderMarkdown(doc.markdown)}
      </details>
      {accepted ? null : !session ? (
        <p>
          <a href={`/login?next=${encodeURIComponent(`/apis/${props.slug}#terms`)}`}>Sign in</a> to accept these terms
          for your organization.
        </p>
      ) : canAccept ? (
        <form method="post" action={`/apis/${props.slug}/terms/accept`}>
          {csrfField(c)}
          <input type="hidden" name="document_id" value={doc.id} />
          <button type="submit">
            Accept version {doc.version} for {session.orgName}
          </button>
        </form>
      ) : (
        <p>Only an owner or admin of your organization can accept terms.</p>
      )}
    </>
  );
}

listingPages.get('/apis/:slug', (c) => renderListing(c, { endpointId: c.req.query('try') }));

// Long: a page: the listing read at the top, the rest is the markup of one view (summary, endpoints, console,
// snippets, stats, terms).
/** The listing page; `tryState` is what a console post brings back to its "Try it" section. */
export async function renderListing(
  c: Context<WebEnv>,
  tryState: ConsoleState,
  status: ContentfulStatusCode = 200,
): Promise<Response> {
  const ctx = c.get('ctx');
  const session = c.get('webSession');
  const api = await getVisibleListing(ctx.db, c.req.param('slug') ?? '', session?.principal.orgId);
  const [d, schema, stats, ranks] = await Promise.all([
    listingDetail(ctx.db, api),
    listingSchema(ctx.db, api),
    listingStats(ctx.db, api, ctx.clock.now()),
    listingRanks(ctx.db, api),
  ]);
  const tryView = await consoleView(ctx, session?.principal, api, schema);
  const first = d.endpoints[0];
  const gw = ctx.config.urls.gateway;
  const firstPath = first?.path.replace(/\{[^}]+\}/g, '1') ?? '/';
  const windows = [
    ['7 days', stats.last_7d],
    ['30 days', stats.last_30d],
  ] as const;
  return renderPage(
    c,
    { title: d.name, description: d.summary, status, scripts: [CONSOLE_JS_HREF] },
    <>
      <p>{d.summary}</p>
      <dl class="facts">
        <dt>Provider</dt>
        <dd>{d.provider ? <a href={`/providers/${d.provider.slug}`}>{d.provider.display_name}</a> : 'unknown'}</dd>
        <dt>Category</dt>
        <dd>{d.category}</dd>
        <dt>Status</dt>
        <dd class={`state-${d.status}`}>{d.status}</dd>
        {d.tags.length ? (
          <>
            <dt>Tags</dt>
            <dd>{d.tags.join(', ')}</dd>
          </>
        ) : null}
      </dl>
      {d.description ? renderMarkdown(d.description) : null}
      <h2>Endpoints and prices</h2>
      <div class="table-wrap" tabindex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
        <table>
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col" class="num">
                Price per call
              </th>
              <th scope="col">Scheduled change</th>
            </tr>
          </thead>
          <tbody>
            {d.endpoints.map((e) => (
              <tr>
                <td>
                  <code>
                    {e.method} {e.path}
                  </code>
                  {e.summary ? <div class="hint">{e.summary}</div> : null}
                </td>
                <td class="num">{e.price_cents === 0 ? 'free' : formatCents(e.price_cents)}</td>
                <td>{pendingPriceText(e.pending_price)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ConsoleSection c={c} slug={d.slug} v={tryView} state={tryState} />
      <h2>Call it</h2>
      <h3>curl</h3>
      <pre>
        <code>{`curl -H "Authorization: Bearer $SVC_API_KEY" \\\n  "${gw}/${d.slug}${firstPath}"`}</code>
      </pre>
      <h3>svc</h3>
      <pre>
        <code>{`svc call ${d.slug} ${first?.path ?? '/'}`}</code>
      </pre>
      <h3>MCP</h3>
      <pre>
        <code>
          {`call_api { "slug": "${d.slug}", "endpoint": "${first?.path ?? '/'}", "method": "${first?.method ?? 'GET'}" }`}
        </code>
      </pre>
      <h2>Schemas</h2>
      {schema.endpoints.map((e) => (
        <details>
          <summary>
            {e.method} {e.path}
          </summary>
          {e.description ? <p>{e.description}</p> : null}
          <h3>Parameters</h3>
          <pre>
            <code>{json(e.parameters)}</code>
          </pre>
          <h3>Request body</h3>
          <pre>
            <code>{json(e.request)}</code>
          </pre>
          <h3>Response</h3>
          <pre>
            <code>{json(e.response)}</code>
          </pre>
        </details>
      ))}
      <h2>Stats</h2>
      <p>
        {windows.map(([label, w]) => (
          <>
            {label}: {w.calls} calls from {w.distinct_orgs} orgs
            {w.success_rate !== null ? `, ${(w.success_rate * 100).toFixed(1)}% succeeded` : ''}.{' '}
          </>
        ))}
      </p>
      {renderChart({
        title: 'Latency (ms), p50 and p95, last 7 and 30 days',
        categories: windows.map(([l]) => l),
        series: [
          { name: 'p50', data: windows.map(([, w]) => w.p50_latency_ms ?? 0) },
          { name: 'p95', data: windows.map(([, w]) => w.p95_latency_ms ?? 0) },
        ],
        unit: 'ms',
        height: 200,
      })}
      {renderChart({
        title: 'Success rate (%), last 7 and 30 days',
        categories: windows.map(([l]) => l),
        series: [
          {
            name: 'success',
            data: windows.map(([, w]) => (w.success_rate === null ? 0 : Math.round(w.success_rate * 1000) / 10)),
          },
        ],
        unit: 'percent',
        height: 200,
      })}
      <h2>Ranks</h2>
      {ranks.ranks.length ? (
        <ul>
          {ranks.ranks.map((r) => (
            <li>
              #{r.rank} in <a href={`/leaderboards/${r.board}`}>{r.board.replace(/_/g, ' ')}</a>
              {r.category ? ` (${r.category})` : ''}
            </li>
          ))}
        </ul>
      ) : (
        <p>Not ranked yet.</p>
      )}
      <h2 id="terms">Terms</h2>
      <TermsSection c={c} apiId={api.id} slug={d.slug} />
    </>,
  );
}

listingPages.post('/apis/:slug/terms/accept', async (c) => {
  const p = requireWebSession(c, `/apis/${c.req.param('slug')}#terms`);
  const documentId = (await formString(c, 'document_id')) || undefined;
  const r = await acceptListingTerms(c.get('ctx'), p, c.req.param('slug'), documentId);
  // Accepted from the console's own notice: back to the console.
  const back = (await formString(c, 'return_to')) === 'try' ? '#try' : '#terms';
  return c.redirect(`/apis/${r.slug}${back}`, 303);
});

/** "Try it": a quote or a call (control/console/console.service.ts), answered with the listing page and its result. */
listingPages.post('/apis/:slug/try', async (c) => {
  const p = requireWebSession(c, `/apis/${c.req.param('slug')}#try`);
  const { raw, values, errors } = await consoleFormInput(c);
  const state: ConsoleState = { endpointId: values.endpoint_id, values };
  const parsed = ConsoleCallInputSchema.safeParse(raw);
  if (Object.keys(errors).length || !parsed.success) {
    if (!parsed.success && !Object.keys(errors).length)
      errors._form = parsed.error.issues.map((i) => `${i.path.join('.') || 'form'}: ${i.message}`).join('; ');
    return renderListing(c, { ...state, errors }, 400);
  }
  try {
    return renderListing(c, { ...state, result: await runConsole(c.get('ctx'), p, parsed.data) });
  } catch (e) {
    return renderListing(c, { ...state, errors: consoleErrors(e) }, 400);
  }
});

/** The console key's daily cap, set from the console (the key is created with it when it does not exist yet). */
listingPages.post('/apis/:slug/try/cap', async (c) => {
  const p = requireWebSession(c, `/apis/${c.req.param('slug')}#try`);
  const values = await formObject(c);
  const errors: FieldErrors = {};
  const money = moneyFields(values, { daily_cap: 'daily_cap_cents' }, errors);
  const state: ConsoleState = { endpointId: values.endpoint_id };
  const parsed = ConsoleCapInputSchema.safeParse(money);
  if (Object.keys(errors).length || !parsed.success)
    return renderListing(c, { ...state, errors: { _form: 'Enter the daily cap in dollars, like 5 or 5.25.' } }, 400);
  try {
    await setConsoleDailyCap(c.get('ctx'), p, parsed.data);
  } catch (e) {
    return renderListing(c, { ...state, errors: consoleErrors(e) }, 400);
  }
  return c.redirect(`/apis/${c.req.param('slug')}?try=${encodeURIComponent(values.endpoint_id ?? '')}#try`, 303);
});
