/**
 * The OAuth authorization page: the person signs in by email code (the web sign-in), sees which client asks
 * (its self-asserted name, marked unverified) and approves or denies. Approval answers the client's redirect_uri
 * with a one-time code; every request parameter is validated again on each post. A step-up request (a registered
 * key asking for full scope) from a browser nobody is signed in to takes the branch in oauth-step-up.tsx.
 */
import type { Context } from 'hono';
import { issuerOf } from '../oauth/oauth-settings.js';
import {
  AuthorizationPageError,
  AuthorizationRedirectError,
  parseAuthorizationRequest,
  type AuthorizationRequest,
  type RequestParams,
} from '../oauth/authorization-request.js';
import { approveAuthorization, denyAuthorization, elevateAndApprove } from '../oauth/grants.service.js';
import { clientIp } from '../lib/client-ip.js';
import { SvcError } from '../../core/errors.js';
import { EmailInputSchema, LoginVerifyInputSchema } from '../../core/schemas/identity.schemas.js';
import { consumeLoginCode, requestLoginCode } from '../sessions/sessions.service.js';
import { csrfField } from './csrf.js';
import { formString } from './form.js';
import { renderPage } from './layout.js';
import { allowFormRedirectTo } from './security-headers.js';
import { newWebRouter, type WebEnv } from './web-env.js';
import { requireWebSession } from './web-session.js';
import {
  AUTHORIZE_PARAMS,
  DecisionButtons,
  RequestFields,
  StepUpCodeForm,
  StepUpEmailForm,
  authorizeUrl,
} from './oauth-step-up.js';

export const oauthAuthorizeRoutes = newWebRouter();

const TITLE = 'Connect an application';

type Checked = { req: AuthorizationRequest; issuer: string; params: RequestParams };

async function _validate(c: Context<WebEnv>, params: RequestParams): Promise<Checked | Response> {
  const ctx = c.get('ctx');
  const issuer = issuerOf(ctx.config, c.req.url);
  try {
    return { req: await parseAuthorizationRequest(ctx, params, issuer), issuer, params };
  } catch (e) {
    if (e instanceof AuthorizationRedirectError) return c.redirect(e.redirectTo, 303);
    if (e instanceof AuthorizationPageError)
      return renderPage(
        c,
        { title: 'This authorization request cannot be used', status: 400 },
        <>
          <p class="notice error" role="alert">
            {e.description}
          </p>
          <p>
            Nothing was shared. Go back to the application that sent you here and connect again (error{' '}
            <code>{e.error}</code>).
          </p>
        </>,
      );
    throw e;
  }
}

async function _validatePosted(c: Context<WebEnv>): Promise<Checked | Response> {
  const entries = await Promise.all(AUTHORIZE_PARAMS.map(async (p) => [p, await formString(c, p)] as const));
  return _validate(c, Object.fromEntries(entries));
}

/** The form's post ends in a redirect to the client: the CSP's form-action must allow its origin or scheme. */
function _allowRedirect(c: Context<WebEnv>, redirectUri: string): void {
  const url = new URL(redirectUri);
  if (url.protocol === 'http:' || url.protocol === 'https:') allowFormRedirectTo(c, url.origin);
  else c.set('cspFormAction', [...(c.get('cspFormAction') ?? []), url.protocol]);
}

function Consent(props: { c: Context<WebEnv>; req: AuthorizationRequest; params: RequestParams }) {
  const { c, req } = props;
  const session = c.get('webSession')!;
  const name = req.client.clientName ?? 'An unnamed application';
  const returnTo = new URL(req.redirectUri);
  return (
    <>
      <p>
        <strong>{name}</strong> <span class="muted">(name given by the application, not verified by svc)</span> asks to
        use svc as <strong>{session.orgName}</strong>
        {session.orgName === session.email ? '' : ` (${session.email})`} through MCP.
      </p>
      <dl>
        <dt>Client</dt>
        <dd>
          <code>{req.client.clientId}</code>
        </dd>
        <dt>Returns you to</dt>
        <dd>
          <code>
            {returnTo.protocol === 'http:' || returnTo.protocol === 'https:' ? returnTo.origin : returnTo.protocol}
          </code>
        </dd>
        <dt>Access</dt>
        <dd>
          Full access to this account with a new API key named after the application: search and call APIs (paid calls
          spend your credits), manage keys and spend caps, start billing steps, and manage your provider listings.
          Revoke it any time on the keys page.
        </dd>
      </dl>
      <form class="stack" method="post" action="/oauth/authorize">
        {csrfField(c)}
        <RequestFields params={props.params} />
        <DecisionButtons approve="Approve" />
      </form>
    </>
  );
}

oauthAuthorizeRoutes.get('/oauth/authorize', async (c) => {
  const query = c.req.query();
  const checked = await _validate(c, Object.fromEntries(AUTHORIZE_PARAMS.map((p) => [p, query[p]])));
  if (checked instanceof Response) return checked;
  const { req, params } = checked;
  if (!c.get('webSession') && req.stepUp)
    return renderPage(c, { title: TITLE }, <StepUpEmailForm c={c} req={req} params={params} />);
  requireWebSession(c);
  _allowRedirect(c, req.redirectUri);
  return renderPage(c, { title: TITLE }, <Consent c={c} req={req} params={params} />);
});

/** Step-up: sends the login code to the email that will own the agent's account. */
oauthAuthorizeRoutes.post('/oauth/authorize/email', async (c) => {
  const ctx = c.get('ctx');
  const checked = await _validatePosted(c);
  if (checked instanceof Response) return checked;
  const { req, params } = checked;
  if (!req.stepUp || c.get('webSession')) return c.redirect(authorizeUrl(params), 303);
  const raw = (await formString(c, 'email')) ?? '';
  const input = EmailInputSchema.safeParse({ email: raw });
  const again = (error: string, status: 400 | 429) =>
    renderPage(
      c,
      { title: TITLE, status },
      <StepUpEmailForm c={c} req={req} params={params} email={raw} error={error} />,
    );
  if (!input.success) return again('Enter a valid email.', 400);
  try {
    // The one sign-in flow (sessions.service.ts): per address a 429, per email never (a quiet no-op).
    await requestLoginCode(ctx, input.data, { ip: clientIp(c) });
  } catch (e) {
    if (!(e instanceof SvcError && e.code === 'rate_limited')) throw e;
    c.header('retry-after', String(e.retryAfter ?? 60));
    return again(e.detail, 429);
  }
  _allowRedirect(c, req.redirectUri);
  return renderPage(c, { title: TITLE }, <StepUpCodeForm c={c} req={req} params={params} email={input.data.email} />);
});

/** Step-up answer: the code proves the email, which is verified for the key's org; the same key is elevated. */
async function _stepUpAnswer(c: Context<WebEnv>, checked: Checked, rawEmail: string): Promise<Response> {
  const { req, params, issuer } = checked;
  if ((await formString(c, 'decision')) !== 'approve') return c.redirect(denyAuthorization(req, issuer), 303);
  const parsed = EmailInputSchema.safeParse({ email: rawEmail });
  if (!parsed.success) return c.redirect(authorizeUrl(params), 303);
  const { email } = parsed.data;
  const ctx = c.get('ctx');
  const retry = (error: string, status: 400 | 409 | 429) => {
    _allowRedirect(c, req.redirectUri);
    return renderPage(
      c,
      { title: TITLE, status },
      <StepUpCodeForm c={c} req={req} params={params} email={email} error={error} />,
    );
  };
  const input = LoginVerifyInputSchema.safeParse({
    ...parsed.data,
    code: ((await formString(c, 'code')) ?? '').trim(),
  });
  if (!input.success) return retry('The code is the 6 digits from the email.', 400);
  try {
    await consumeLoginCode(ctx, input.data, { ip: clientIp(c) });
  } catch (e) {
    if (e instanceof SvcError && e.code === 'invalid_code') return retry('That code is wrong or expired.', 400);
    if (e instanceof SvcError && e.code === 'too_many_attempts')
      return retry('Too many wrong codes: go back and send a new code.', 429);
    if (e instanceof SvcError && e.code === 'rate_limited') {
      c.header('retry-after', String(e.retryAfter ?? 60));
      return retry(e.detail, 429);
    }
    throw e;
  }
  try {
    return c.redirect(await elevateAndApprove(ctx, { ...req, stepUp: req.stepUp! }, email, issuer), 303);
  } catch (e) {
    if (e instanceof SvcError && e.code === 'conflict')
      return renderPage(
        c,
        { title: TITLE, status: 409 },
        <>
          <p class="notice error" role="alert">
            {email} already has an svc account, so it cannot own the agent's account too.
          </p>
          <p>
            <a href={`/login?next=${encodeURIComponent(authorizeUrl(params))}`}>Sign in to that account</a> to let the
            application use it instead (it gets a new key there), or go back and use another email.
          </p>
        </>,
      );
    throw e;
  }
}

oauthAuthorizeRoutes.post('/oauth/authorize', async (c) => {
  const checked = await _validatePosted(c);
  if (checked instanceof Response) return checked;
  const stepUpEmail = await formString(c, 'email');
  if (!c.get('webSession') && checked.req.stepUp && stepUpEmail !== undefined)
    return _stepUpAnswer(c, checked, stepUpEmail);
  const principal = requireWebSession(c);
  const { req, issuer } = checked;
  const to =
    (await formString(c, 'decision')) === 'approve'
      ? await approveAuthorization(c.get('ctx'), req, principal, issuer)
      : denyAuthorization(req, issuer);
  return c.redirect(to, 303);
});
