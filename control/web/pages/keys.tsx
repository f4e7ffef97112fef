/**
 * Dashboard keys: create (with caps and approval mode; the plaintext is shown on that one response only),
 * change caps, revoke. The same service calls as /v1/keys, with the session's principal.
 */
import type { Context } from 'hono';
import { z } from 'zod';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { createKeyFor, listKeys, patchKey, revokeKey } from '../../keys/keys.service.js';
import type { KeyResource } from '../../../core/schemas/keys.schemas.js';
import { SvcError } from '../../../core/errors.js';
import { formatCents } from '../../../core/money.js';
import { csrfField } from '../csrf.js';
import { centsToDollarsInput, dollarsToCents, formString } from '../form.js';
import { renderPage } from '../layout.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { DashNav } from './dashboard-nav.js';

export const keysPages = newWebRouter();

const Name = z.string().trim().min(1, 'Name the key').max(100);
const Mode = z.enum(['auto', 'free_only']);

function CapsFields(props: { k?: KeyResource; idPrefix: string }) {
  const k = props.k;
  const field = (name: string, label: string, value: number | null | undefined, hint: string) => (
    <label>
      {label} <span class="hint">{hint}</span>
      <input name={name} inputmode="decimal" value={centsToDollarsInput(value)} placeholder="no cap" />
    </label>
  );
  return (
    <>
      {field('daily_cap', 'Daily cap ($)', k?.daily_cap_cents, 'spend per UTC day')}
      {field('budget', 'Budget ($)', k?.budget_cents, 'lifetime spend')}
      {field('per_call_max', 'Per-call max ($)', k?.per_call_max_cents, 'refuse pricier calls')}
      <label>
        Approval mode
        <select name="approval_mode">
          <option value="auto" selected={k?.approval_mode !== 'free_only'}>
            auto: any endpoint within the caps
          </option>
          <option value="free_only" selected={k?.approval_mode === 'free_only'}>
            free_only: free endpoints only
          </option>
        </select>
      </label>
    </>
  );
}

async function capsFrom(c: Context<WebEnv>) {
  const mode = Mode.safeParse(await formString(c, 'approval_mode'));
  return {
    daily_cap_cents: dollarsToCents('daily_cap', await formString(c, 'daily_cap')),
    budget_cents: dollarsToCents('budget', await formString(c, 'budget')),
    per_call_max_cents: dollarsToCents('per_call_max', await formString(c, 'per_call_max')),
    approval_mode: mode.success ? mode.data : ('auto' as const),
  };
}

const cap = (v: number | null) => (v === null ? '—' : formatCents(v));

async function keysPage(
  c: Context<WebEnv>,
  extra: { created?: { plaintext: string; key: KeyResource }; error?: string; status?: ContentfulStatusCode } = {},
) {
  const p = requireWebSession(c);
  // One page of 100 keys, newest first: more than a person manages by hand.
  const keys = (await listKeys(c.get('ctx').db, p, 100, 0)).data;
  return renderPage(
    c,
    { title: 'API keys', status: extra.status ?? 200 },
    <>
      <DashNav current="/dashboard/keys" />
      {extra.error ? (
        <p class="notice error" role="alert">
          {extra.error}
        </p>
      ) : null}
      {extra.created ? (
        <section class="notice ok" aria-labelledby="new-key">
          <h2 id="new-key">Key “{extra.created.key.name}” created</h2>
          <p>Copy it now: it is shown only this once. We keep only its hash.</p>
          <p class="secret" data-testid="new-key">
            {extra.created.plaintext}
          </p>
        </section>
      ) : null}
      <h2>Create a key</h2>
      <form class="stack" method="post" action="/dashboard/keys">
        {csrfField(c)}
        <label>
          Name
          <input name="name" required maxlength={100} placeholder="e.g. my-agent" />
        </label>
        <CapsFields idPrefix="new" />
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
            Spent {formatCents(k.spent_cents)} · daily cap {cap(k.daily_cap_cents)} · budget {cap(k.budget_cents)} · per
            call {cap(k.per_call_max_cents)} · {k.approval_mode} · scopes {k.scopes.join(', ')}
          </p>
          {k.revoked_at ? null : (
            <>
              <details>
                <summary>Change caps</summary>
                <form class="stack" method="post" action={`/dashboard/keys/${k.id}`}>
                  {csrfField(c)}
                  <CapsFields k={k} idPrefix={k.id} />
                  <div>
                    <button type="submit">Save caps</button>
                  </div>
                </form>
              </details>
              <form method="post" action={`/dashboard/keys/${k.id}/revoke`}>
                {csrfField(c)}
                <button class="danger" type="submit">
                  Revoke {k.name}
                </button>
              </form>
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
  const name = Name.safeParse((await formString(c, 'name')) ?? '');
  if (!name.success) return keysPage(c, { error: 'Name the key (1 to 100 characters).', status: 400 });
  try {
    const { resource, plaintext } = await createKeyFor(db, p, { name: name.data, ...(await capsFrom(c)) }, clock.now());
    return keysPage(c, { created: { plaintext, key: resource }, status: 201 });
  } catch (e) {
    if (e instanceof SvcError && e.status < 500)
      return keysPage(c, { error: e.detail, status: e.status as ContentfulStatusCode });
    throw e;
  }
});

keysPages.post('/dashboard/keys/:id', async (c) => {
  const p = requireWebSession(c);
  const { db, clock } = c.get('ctx');
  try {
    await patchKey(db, p, c.req.param('id'), await capsFrom(c), clock.now());
  } catch (e) {
    if (e instanceof SvcError && e.status < 500)
      return keysPage(c, { error: e.detail, status: e.status as ContentfulStatusCode });
    throw e;
  }
  return c.redirect('/dashboard/keys', 303);
});

keysPages.post('/dashboard/keys/:id/revoke', async (c) => {
  const p = requireWebSession(c);
  const { db, clock } = c.get('ctx');
  await revokeKey(db, p, c.req.param('id'), clock.now());
  return c.redirect('/dashboard/keys', 303);
});
