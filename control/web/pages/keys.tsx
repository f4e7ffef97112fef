/**
 * Dashboard keys: create (with caps and approval mode), change caps, revoke after a confirmation. The same service
 * calls as /v1/keys, with the session's principal; each form is parsed with the core key schema and a refusal
 * comes back to the same form with the message beside the field.
 *
 * A created key is shown once without making a reload create another: the POST answers 303 to the list and hands
 * the plaintext over in a short-lived cookie (AES-GCM under a key derived from the server key, bound to the person),
 * which the next GET shows and clears.
 */
import { createHmac } from 'node:crypto';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { createKeyFor, listKeys, patchKey, revokeKey } from '../../keys/keys.service.js';
import { CreateKeyInputSchema, PatchKeyInputSchema, type KeyResource } from '../../../core/schemas/keys.schemas.js';
import { decryptSecret, encryptSecret } from '../../../core/crypto.js';
import { formatCents } from '../../../core/money.js';
import { clearCookie, readCookie, writeCookie } from '../cookies.js';
import { csrfField } from '../csrf.js';
import { FieldError, FormErrors, TextField, invalidAttrs } from '../fields.js';
import {
  centsToDollarsInput,
  fieldErrorsOf,
  fieldErrorsOfSvc,
  formObject,
  refusalStatus,
  moneyFields,
  type FieldLabel,
  type FormState,
} from '../form.js';
import { shortTime } from '../format.js';
import { renderPage } from '../layout.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { DashNav } from './dashboard-nav.js';

export const keysPages = newWebRouter();

/** Schema field -> what the person reads (and the form input it came from). */
const LABELS: Record<string, FieldLabel> = {
  name: { label: 'Name' },
  daily_cap_cents: { label: 'Daily cap', field: 'daily_cap', money: true },
  budget_cents: { label: 'Budget', field: 'budget', money: true },
  per_call_max_cents: { label: 'Per-call max', field: 'per_call_max', money: true },
  approval_mode: { label: 'Approval mode' },
};
const MONEY = { daily_cap: 'daily_cap_cents', budget: 'budget_cents', per_call_max: 'per_call_max_cents' };

/** Which form a refusal belongs to: `new` (create) or a key id (change caps). */
interface Refused extends FormState {
  form: string;
}

function CapsFields(props: { k?: KeyResource; form: string; state?: FormState | undefined }) {
  const { k, form, state } = props;
  const money = (name: string, label: string, value: number | null | undefined, hint: string) => (
    <TextField
      form={form}
      name={name}
      label={label}
      hint={hint}
      inputmode="decimal"
      value={centsToDollarsInput(value)}
      placeholder="no cap"
      state={state}
    />
  );
  const mode = state ? state.values.approval_mode : k?.approval_mode;
  return (
    <>
      {money('daily_cap', 'Daily cap ($)', k?.daily_cap_cents, 'spend per UTC day')}
      {money('budget', 'Budget ($)', k?.budget_cents, 'lifetime spend')}
      {money('per_call_max', 'Per-call max ($)', k?.per_call_max_cents, 'refuse pricier calls')}
      <div class="field">
        <label for={`${form}-approval_mode`}>Approval mode</label>
        <select id={`${form}-approval_mode`} name="approval_mode" {...invalidAttrs(form, 'approval_mode', state)}>
          <option value="auto" selected={mode !== 'free_only'}>
            auto: any endpoint within the caps
          </option>
          <option value="free_only" selected={mode === 'free_only'}>
            free_only: free endpoints only
          </option>
        </select>
        <FieldError form={form} name="approval_mode" state={state} />
      </div>
    </>
  );
}

/** The form's caps as the schema's fields (cents), with dollar typos collected in `errors`. */
function capsOf(values: Record<string, string>, errors: Record<string, string>) {
  return { ...moneyFields(values, MONEY, errors), approval_mode: values.approval_mode };
}

const cap = (v: number | null) => (v === null ? '—' : formatCents(v));

// ---- one-time reveal of a new key ----

interface Reveal {
  user: string;
  key: string;
  plaintext: string;
  expires: number;
}
const REVEAL_SECONDS = 300;

function revealCipherKey(c: Context<WebEnv>): Buffer {
  return createHmac('sha256', c.get('ctx').secretKey).update('web:key-reveal').digest();
}

function handOver(c: Context<WebEnv>, r: Reveal): void {
  writeCookie(c, 'reveal', encryptSecret(revealCipherKey(c), JSON.stringify(r)), REVEAL_SECONDS);
}

/** The plaintext handed over by the create that just happened, read once (the cookie is cleared now). */
function takeReveal(c: Context<WebEnv>, userId: string | null, now: number): Reveal | undefined {
  const raw = readCookie(c, 'reveal');
  if (raw === undefined) return undefined;
  clearCookie(c, 'reveal');
  try {
    const r = JSON.parse(decryptSecret(revealCipherKey(c), raw)) as Reveal;
    return r.user === userId && r.expires > now ? r : undefined;
  } catch {
    return undefined; // forged, from an older server key, or cut: nothing to show
  }
}

// ---- pages ----

async function keysPage(c: Context<WebEnv>, refused?: Refused, status: ContentfulStatusCode = 200) {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  // One page of 100 keys, newest first: more than a person manages by hand.
  const keys = (await listKeys(ctx.db, p, 100, 0)).data;
  const reveal = takeReveal(c, p.userId, ctx.clock.now());
  const created = reveal ? keys.find((k) => k.id === reveal.key) : undefined;
  const stateFor = (form: string) => (refused?.form === form ? refused : undefined);
  return renderPage(
    c,
    { title: 'API keys', status },
    <>
      <DashNav current="/dashboard/keys" />
      {reveal && created ? (
        <section class="notice ok" aria-labelledby="new-key">
          <h2 id="new-key">Key “{created.name}” created</h2>
          <p>Copy it now: it is shown only this once. We keep only its hash.</p>
          <p class="secret" data-testid="new-key">
            {reveal.plaintext}
          </p>
        </section>
      ) : null}
      <h2 id="create">Create a key</h2>
      <form class="stack" method="post" action="/dashboard/keys" aria-labelledby="create" novalidate>
        {csrfField(c)}
        <FormErrors errors={stateFor('new')?.errors} />
        <TextField
          form="new"
          name="name"
          label="Name"
          maxlength={100}
          placeholder="e.g. my-agent"
          state={stateFor('new')}
        />
        <CapsFields form="new" state={stateFor('new')} />
        <div>
          <button type="submit">Create key</button>
        </div>
      </form>
      <h2>Your keys</h2>
      {keys.length === 0 ? <p>No keys yet.</p> : null}
      {keys.map((k) => (
        <section class="card" aria-label={`Key ${k.name}`}>
          <h3>
            {k.name} <code>{k.start}…</code>{' '}
            {k.revoked_at ? <span class="tag">revoked</span> : <span class="tag state-live">active</span>}
          </h3>
          <p class="meta">
            Created {shortTime(k.created_at)} · last used {shortTime(k.last_used_at)}
            {k.revoked_at ? ` · revoked ${shortTime(k.revoked_at)}` : ''}
          </p>
          <p class="meta">
            Spent {formatCents(k.spent_cents)} · daily cap {cap(k.daily_cap_cents)} · budget {cap(k.budget_cents)} · per
            call {cap(k.per_call_max_cents)} · {k.approval_mode} · scopes {k.scopes.join(', ')}
          </p>
          {k.revoked_at ? null : (
            <>
              <details open={stateFor(k.id) !== undefined}>
                <summary>Change caps</summary>
                <form class="stack" method="post" action={`/dashboard/keys/${k.id}`} novalidate>
                  {csrfField(c)}
                  <FormErrors errors={stateFor(k.id)?.errors} />
                  <CapsFields k={k} form={k.id} state={stateFor(k.id)} />
                  <div>
                    <button type="submit">Save caps</button>
                  </div>
                </form>
              </details>
              <a class="button danger" href={`/dashboard/keys/${k.id}/revoke`}>
                Revoke {k.name}…
              </a>
            </>
          )}
        </section>
      ))}
    </>,
  );
}

keysPages.get('/dashboard/keys', (c) => keysPage(c));

keysPages.post('/dashboard/keys', async (c) => {
  const p = requireWebSession(c);
  const { db, clock } = c.get('ctx');
  const values = await formObject(c);
  const errors: Record<string, string> = {};
  const parsed = CreateKeyInputSchema.safeParse({ name: values.name ?? '', ...capsOf(values, errors) });
  if (!parsed.success) fieldErrorsOf(parsed.error, LABELS, errors);
  if (!parsed.success || Object.keys(errors).length > 0) return keysPage(c, { form: 'new', values, errors }, 400);
  try {
    const { resource, plaintext } = await createKeyFor(db, p, parsed.data, clock.now());
    handOver(c, { user: p.userId ?? '', key: resource.id, plaintext, expires: clock.now() + REVEAL_SECONDS * 1000 });
  } catch (e) {
    return keysPage(c, { form: 'new', values, errors: fieldErrorsOfSvc(e, LABELS) }, refusalStatus(e));
  }
  return c.redirect('/dashboard/keys#new-key', 303);
});

keysPages.post('/dashboard/keys/:id', async (c) => {
  const p = requireWebSession(c);
  const { db, clock } = c.get('ctx');
  const id = c.req.param('id');
  const values = await formObject(c);
  const errors: Record<string, string> = {};
  const parsed = PatchKeyInputSchema.safeParse(capsOf(values, errors));
  if (!parsed.success) fieldErrorsOf(parsed.error, LABELS, errors);
  if (!parsed.success || Object.keys(errors).length > 0) return keysPage(c, { form: id, values, errors }, 400);
  try {
    await patchKey(db, p, id, parsed.data, clock.now());
  } catch (e) {
    return keysPage(c, { form: id, values, errors: fieldErrorsOfSvc(e, LABELS) }, refusalStatus(e));
  }
  return c.redirect('/dashboard/keys', 303);
});

/** The confirmation step: what revoking does, and the one button that does it. */
keysPages.get('/dashboard/keys/:id/revoke', async (c) => {
  const p = requireWebSession(c);
  const id = c.req.param('id');
  const key = (await listKeys(c.get('ctx').db, p, 100, 0)).data.find((k) => k.id === id);
  if (!key || key.revoked_at) return c.redirect('/dashboard/keys', 303);
  return renderPage(
    c,
    { title: `Revoke ${key.name}?` },
    <>
      <DashNav current="/dashboard/keys" />
      <p>
        Key <code>{key.start}…</code>, created {shortTime(key.created_at)}, last used {shortTime(key.last_used_at)}.
      </p>
      <p class="notice error">
        Every agent, script or MCP client that uses this key stops working at once. This cannot be undone: you would
        create a new key and put it everywhere this one is.
      </p>
      <form class="row" method="post" action={`/dashboard/keys/${key.id}/revoke`}>
        {csrfField(c)}
        <button class="danger" type="submit">
          Revoke {key.name}
        </button>
        <a class="button secondary" href="/dashboard/keys">
          Keep it
        </a>
      </form>
    </>,
  );
});

keysPages.post('/dashboard/keys/:id/revoke', async (c) => {
  const p = requireWebSession(c);
  const { db, clock } = c.get('ctx');
  await revokeKey(db, p, c.req.param('id'), clock.now());
  return c.redirect('/dashboard/keys', 303);
});
