/**
 * The authorization page's step-up branch: an MCP client holding a registered key asked (with a `svc_key:` handle)
 * for full scope, and nobody is signed in. The person proves an email with the login code; approving verifies that
 * email for the key's org, which elevates the same key (control/oauth/grants.service.ts `elevateAndApprove`).
 */
import type { Context } from 'hono';
import type { AuthorizationRequest, RequestParams } from '../oauth/authorization-request.js';
import { csrfField } from './csrf.js';
import { CodeInput, CodeSentNotice } from './login-code.js';
import type { WebEnv } from './web-env.js';

export const AUTHORIZE_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'scope',
] as const;

/** The one submit pair of every consent form: `decision=approve` or `decision=deny`. */
export function DecisionButtons(props: { approve: string }) {
  return (
    <div class="actions">
      <button type="submit" name="decision" value="approve">
        {props.approve}
      </button>{' '}
      <button type="submit" name="decision" value="deny" class="secondary">
        Deny
      </button>
    </div>
  );
}

function ErrorNotice(props: { error: string | undefined }) {
  return props.error ? (
    <p class="notice error" role="alert">
      {props.error}
    </p>
  ) : null;
}

/** The GET address of this authorization request (for a sign-in that comes back to it). */
export function authorizeUrl(params: RequestParams): string {
  const q = new URLSearchParams();
  for (const p of AUTHORIZE_PARAMS) if (params[p] !== undefined) q.set(p, params[p]!);
  return `/oauth/authorize?${q.toString()}`;
}

/** The request's parameters as hidden inputs, so every post carries (and re-validates) the whole request. */
export function RequestFields(props: { params: RequestParams }) {
  return (
    <>
      {AUTHORIZE_PARAMS.map((p) =>
        props.params[p] === undefined ? null : <input type="hidden" name={p} value={props.params[p]} />,
      )}
    </>
  );
}

function Intro(props: { req: AuthorizationRequest }) {
  const { req } = props;
  const stepUp = req.stepUp!;
  return (
    <p>
      <strong>{req.client.clientName ?? 'An unnamed application'}</strong>{' '}
      <span class="muted">(name given by the application, not verified by svc)</span> uses the agent account{' '}
      <strong>{stepUp.orgName}</strong> with the key <code>{stepUp.keyStart}…</code>, which can search and call free
      APIs only. Verify an email to upgrade that same key to full access: paid calls from credits, billing steps and
      provider tools. The email becomes the owner of the agent account.
    </p>
  );
}

export function StepUpEmailForm(props: {
  c: Context<WebEnv>;
  req: AuthorizationRequest;
  params: RequestParams;
  email?: string;
  error?: string;
}) {
  return (
    <>
      <ErrorNotice error={props.error} />
      <Intro req={props.req} />
      <form class="stack" method="post" action="/oauth/authorize/email">
        {csrfField(props.c)}
        <RequestFields params={props.params} />
        <label>
          Email
          <input type="email" name="email" autocomplete="email" required value={props.email ?? ''} />
        </label>
        <div>
          <button type="submit">Send code</button>
        </div>
      </form>
      <p>
        Already have an svc account?{' '}
        <a href={`/login?next=${encodeURIComponent(authorizeUrl(props.params))}`}>Sign in</a> to let the application use
        that account instead.
      </p>
    </>
  );
}

export function StepUpCodeForm(props: {
  c: Context<WebEnv>;
  req: AuthorizationRequest;
  params: RequestParams;
  email: string;
  error?: string;
}) {
  return (
    <>
      <CodeSentNotice email={props.email} error={props.error} />
      <Intro req={props.req} />
      <form class="stack" method="post" action="/oauth/authorize">
        {csrfField(props.c)}
        <RequestFields params={props.params} />
        <input type="hidden" name="email" value={props.email} />
        <CodeInput required={false} />
        <DecisionButtons approve="Verify and approve" />
      </form>
    </>
  );
}
