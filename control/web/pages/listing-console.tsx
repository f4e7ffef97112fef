/**
 * "Try it" on a listing page: a thin adapter over control/console/console.service.ts. A form generated from the
 * chosen endpoint's parameters and body schema posts (session + CSRF, plain form POST, no JS needed) to
 * `/apis/:slug/try`; the answer is the listing page again with the quote or the call's result in this section.
 * /assets/console.<hash>.js, where it runs, posts the same form with fetch and swaps this section in place.
 * No key ever reaches the page: the service holds the org's console key. docs/web.md "Try it".
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { formatCents } from '../../../core/money.js';
import type { ConsoleResult } from '../../../core/schemas/console.schemas.js';
import type { ConsoleView } from '../../console/console.service.js';
import type { ConsoleEndpointForm, ConsoleField } from '../../console/console-form.js';
import { csrfField } from '../csrf.js';
import { SvcError } from '../../../core/errors.js';
import { centsToDollarsInput, formObject, moneyFields, type FieldErrors } from '../form.js';
import { fieldId } from '../fields.js';
import type { WebEnv } from '../web-env.js';

/** What a post brings back to the section: the endpoint, the typed values, and the result or the refusal. */
export interface ConsoleState {
  endpointId?: string | undefined;
  values?: Record<string, string>;
  result?: ConsoleResult;
  errors?: FieldErrors;
}

const FORM = 'try';
const price = (cents: number) => (cents === 0 ? 'free' : formatCents(cents));
const inputName = (f: ConsoleField) => `${f.in === 'header' ? 'headers' : f.in}.${f.name}`;

function ParamField(props: { f: ConsoleField; value: string; error: string | undefined }) {
  const { f } = props;
  const name = inputName(f);
  const id = fieldId(FORM, name);
  const invalid = props.error ? { 'aria-invalid': 'true' as const, 'aria-describedby': `${id}-error` } : {};
  return (
    <div class="field">
      <label for={id}>
        {f.name}{' '}
        <span class="hint">
          {f.in} · {f.type}
          {f.required ? ' · required' : ''}
          {f.description ? ` · ${f.description}` : ''}
        </span>
      </label>
      {f.choices ? (
        <select id={id} name={name} required={f.required} {...invalid}>
          {f.required ? null : <option value="">(none)</option>}
          {f.choices.map((c) => (
            <option value={c} selected={c === props.value}>
              {c}
            </option>
          ))}
        </select>
      ) : (
        <input id={id} name={name} type="text" value={props.value} required={f.required} {...invalid} />
      )}
      {props.error ? (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

function QuoteResult(props: { r: Extract<ConsoleResult, { kind: 'quote' }> }) {
  const { r } = props;
  return (
    <div class={r.would_pass ? 'notice' : 'notice error'}>
      <p data-testid="try-quote">
        This call costs {formatCents(r.price_cents)}; you have {formatCents(r.balance_cents)}.
      </p>
      {r.would_pass ? (
        <p>Nothing was called or charged. Send it below to make the call.</p>
      ) : (
        <p>
          It would be refused: {r.detail ?? r.code} {r.code ? <code>{r.code}</code> : null}
        </p>
      )}
    </div>
  );
}

function CallResult(props: { r: Extract<ConsoleResult, { kind: 'call' }> }) {
  const { r } = props;
  const ok = r.status < 400;
  return (
    <>
      <p class={ok ? 'notice ok' : 'notice error'} data-testid="try-status">
        Status {r.status}
        {r.refusal ? ` · refused by svc: ${r.refusal.detail}` : ''} · charged {formatCents(r.charged_cents)}
        {r.balance_cents !== null ? ` · balance after ${formatCents(r.balance_cents)}` : ''}
        {r.idempotent_replay ? ' · a replay of this same form: not charged again' : ''}
      </p>
      <dl class="facts" data-testid="try-headers">
        {Object.entries(r.headers).map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd>
              <code>{v}</code>
            </dd>
          </>
        ))}
      </dl>
      <h4>Body</h4>
      {r.body_bytes === 0 ? (
        <p>Empty body.</p>
      ) : r.body_encoding === 'base64' ? (
        <p>Binary body, {r.body_bytes.toLocaleString('en-US')} bytes: not shown.</p>
      ) : (
        <>
          {r.body_truncated ? (
            <p class="hint">Showing the start of {r.body_bytes.toLocaleString('en-US')} bytes.</p>
          ) : null}
          <div class="table-wrap" tabindex={0} role="region" aria-label="Response body">
            <pre>
              <code data-testid="try-body">{r.body}</code>
            </pre>
          </div>
        </>
      )}
    </>
  );
}

function EndpointPicker(props: { slug: string; forms: ConsoleEndpointForm[]; chosen: ConsoleEndpointForm }) {
  if (props.forms.length < 2) return null;
  return (
    <form class="row" method="get" action={`/apis/${props.slug}#try`}>
      <div class="field">
        <label for="try-endpoint">Endpoint</label>
        <select id="try-endpoint" name="try">
          {props.forms.map((f) => (
            <option value={f.endpointId} selected={f.endpointId === props.chosen.endpointId}>
              {f.method} {f.path} ({price(f.priceCents)})
            </option>
          ))}
        </select>
      </div>
      <button class="button secondary" type="submit">
        Show its form
      </button>
    </form>
  );
}

function Buttons(props: { v: ConsoleView; f: ConsoleEndpointForm; state: ConsoleState }) {
  const { f, state } = props;
  const r = state.result;
  if (f.priceCents === 0 && !(r?.kind === 'quote' && r.price_cents > 0))
    return (
      <button type="submit" name="action" value="send">
        Send (free)
      </button>
    );
  // A paid endpoint: the free quote first; the send button comes with the quoted price as its ceiling.
  const quoted = r?.kind === 'quote' && r.would_pass ? r.price_cents : null;
  return quoted === null ? (
    <button type="submit" name="action" value="quote">
      Get a free quote
    </button>
  ) : (
    <>
      <input type="hidden" name="max_price_cents" value={String(quoted)} />
      <button type="submit" name="action" value="send">
        Send for {formatCents(quoted)}
      </button>
      <button class="button secondary" type="submit" name="action" value="quote">
        Quote again
      </button>
    </>
  );
}

// Long: the markup of one view (notices, endpoint picker, generated form, result, key and cap form), top to bottom.
/** The "Try it" section of a listing page (id `try`). */
export function ConsoleSection(props: { c: Context<WebEnv>; slug: string; v: ConsoleView; state: ConsoleState }) {
  const { c, slug, v, state } = props;
  const chosen = v.forms.find((f) => f.endpointId === state.endpointId) ?? v.forms[0];
  if (!chosen) return null;
  const errors = state.errors ?? {};
  const values = state.values;
  const next = encodeURIComponent(`/apis/${slug}?try=${chosen.endpointId}#try`);
  return (
    <section id="try" aria-labelledby="try-title" data-console>
      <h2 id="try-title">Try it</h2>
      <p>
        Calls made here go through the gateway with your organization's console key and are metered and charged like any
        other call. {chosen.priceCents > 0 ? 'A paid endpoint shows its price in a free quote first.' : null}
      </p>
      {v.signedIn ? null : (
        <p class="notice">
          <a href={`/login?next=${next}`}>Sign in</a> to send this call. You can fill in the form first.
        </p>
      )}
      {v.termsPending ? (
        <div class="notice" data-testid="try-terms">
          <p>This API's terms (version {v.termsPending.version}) must be accepted before it can be called.</p>
          {v.termsPending.mayAccept ? (
            <form method="post" action={`/apis/${slug}/terms/accept`}>
              {csrfField(c)}
              <input type="hidden" name="document_id" value={v.termsPending.documentId} />
              <input type="hidden" name="return_to" value="try" />
              <button type="submit">Accept these terms (version {v.termsPending.version}) and continue</button>{' '}
              <a href="#terms">Read them below</a>
            </form>
          ) : (
            <p>Only an owner or admin of your organization can accept them.</p>
          )}
        </div>
      ) : null}
      <EndpointPicker slug={slug} forms={v.forms} chosen={chosen} />
      <form method="post" action={`/apis/${slug}/try#try`} data-console-form>
        {v.signedIn ? csrfField(c) : null}
        <input type="hidden" name="endpoint_id" value={chosen.endpointId} />
        <input type="hidden" name="attempt" value={randomBytes(16).toString('base64url')} />
        <h3>
          <code>
            {chosen.method} {chosen.path}
          </code>{' '}
          · {price(chosen.priceCents)}
          {chosen.priceCents > 0 ? ' per call' : ''}
        </h3>
        {chosen.summary ? <p class="hint">{chosen.summary}</p> : null}
        {errors._form ? (
          <p class="notice error" role="alert">
            {errors._form}
          </p>
        ) : null}
        {chosen.fields.length === 0 ? <p class="hint">No parameters.</p> : null}
        {chosen.fields.map((f) => (
          <ParamField f={f} value={values ? (values[inputName(f)] ?? '') : f.example} error={errors[inputName(f)]} />
        ))}
        {chosen.body ? (
          <div class="field">
            <label for="try-body">
              Request body{' '}
              <span class="hint">
                {chosen.body.contentType}
                {chosen.body.required ? ' · required' : ''}
              </span>
            </label>
            <textarea
              id="try-body"
              name="body"
              rows={8}
              spellcheck={false}
              {...(errors.body ? { 'aria-invalid': 'true' as const, 'aria-describedby': 'try-body-error' } : {})}
            >
              {values ? (values.body ?? '') : chosen.body.example}
            </textarea>
            {errors.body ? (
              <p class="field-error" id="try-body-error">
                {errors.body}
              </p>
            ) : null}
          </div>
        ) : null}
        {v.signedIn && !v.key ? (
          <div class="field">
            <label for="try-daily_cap">
              Daily cap for console calls ($){' '}
              <span class="hint">your org's console key is created with it on the first call; empty means none</span>
            </label>
            <input
              id="try-daily_cap"
              name="daily_cap"
              type="text"
              inputmode="decimal"
              value={values?.daily_cap ?? centsToDollarsInput(v.defaultDailyCapCents)}
              {...(errors.daily_cap
                ? { 'aria-invalid': 'true' as const, 'aria-describedby': 'try-daily_cap-error' }
                : {})}
            />
            {errors.daily_cap ? (
              <p class="field-error" id="try-daily_cap-error">
                {errors.daily_cap}
              </p>
            ) : null}
          </div>
        ) : null}
        {v.signedIn ? (
          <p class="row">
            <Buttons v={v} f={chosen} state={state} />
          </p>
        ) : null}
      </form>
      <div id="try-result" aria-live="polite" tabindex={-1}>
        {state.result ? (
          <>
            <h3>{state.result.kind === 'quote' ? 'Quote' : 'Response'}</h3>
            {state.result.kind === 'quote' ? <QuoteResult r={state.result} /> : <CallResult r={state.result} />}
          </>
        ) : null}
      </div>
      {v.key ? (
        <form class="row" method="post" action={`/apis/${slug}/try/cap#try`} data-console-cap>
          {csrfField(c)}
          <input type="hidden" name="endpoint_id" value={chosen.endpointId} />
          <p class="hint" data-testid="try-key">
            Sent with your org's key “{v.key.name}” ({v.key.start}…, listed on <a href="/dashboard/keys">Keys</a>):{' '}
            {formatCents(v.key.spent_today_cents)} spent today of a daily cap of{' '}
            {v.key.daily_cap_cents === null ? 'none' : formatCents(v.key.daily_cap_cents)}.
            {v.balanceCents !== null ? ` Balance ${formatCents(v.balanceCents)}.` : ''}
          </p>
          <div class="field">
            <label for="try-cap">Console daily cap ($)</label>
            <input
              id="try-cap"
              name="daily_cap"
              type="text"
              inputmode="decimal"
              value={centsToDollarsInput(v.key.daily_cap_cents)}
            />
          </div>
          <button class="button secondary" type="submit">
            Set cap
          </button>
        </form>
      ) : null}
    </section>
  );
}

/** The fields under `prefix.` of a posted form, by the name after the dot (`query.city` -> `city`). */
function _group(values: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) if (k.startsWith(`${prefix}.`)) out[k.slice(prefix.length + 1)] = v;
  return out;
}

/**
 * The console form as the service's input (still to be parsed with `ConsoleCallInputSchema`), plus the typed values
 * and the field errors found turning dollars into cents.
 */
export async function consoleFormInput(
  c: Context<WebEnv>,
): Promise<{ raw: Record<string, unknown>; values: Record<string, string>; errors: FieldErrors }> {
  const values = await formObject(c);
  const errors: FieldErrors = {};
  const money = moneyFields(values, { daily_cap: 'daily_cap_cents' }, errors);
  const raw: Record<string, unknown> = {
    slug: c.req.param('slug'),
    endpoint_id: values.endpoint_id,
    action: values.action ?? 'send',
    path: _group(values, 'path'),
    query: _group(values, 'query'),
    headers: _group(values, 'headers'),
    body: values.body,
    attempt: values.attempt || undefined,
    max_price_cents: values.max_price_cents ? Number(values.max_price_cents) : undefined,
    // Only on the form before the key exists: absent means "leave the key as it is".
    daily_cap_cents: 'daily_cap' in values ? money.daily_cap_cents : undefined,
  };
  return { raw, values, errors };
}

/** A refusal of the console as messages on the form: per field where the service named one, else at the top. */
export function consoleErrors(e: unknown): FieldErrors {
  if (!(e instanceof SvcError)) throw e;
  const out: FieldErrors = {};
  for (const fe of e.errors ?? []) out[fe.path] ??= `${fe.message.replace(/^./, (ch) => ch.toUpperCase())}.`;
  if (Object.keys(out).length === 0) out._form = e.detail;
  return out;
}
