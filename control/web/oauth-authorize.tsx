/**
 * The OAuth authorization page: the person signs in by email code (the web sign-in), sees which client asks
 * (its self-asserted name, marked unverified) and approves or denies. Approval answers the client's redirect_uri
 * with a one-time code; every request parameter is validated again on the post.
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
import { approveAuthorization, denyAuthorization } from '../oauth/grants.service.js';
import { csrfField } from './csrf.js';
import { formString } from './form.js';
import { renderPage } from './layout.js';
import { allowFormRedirectTo } from './security-headers.js';
import { newWebRouter, type WebEnv } from './web-env.js';
import { requireWebSession } from './web-session.js';

export const oauthAuthorizeRoutes = newWebRouter();

const PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'scope',
] as const;

async function _validate(
  c: Context<WebEnv>,
  params: RequestParams,
): Promise<{ req: AuthorizationRequest; issuer: string } | Response> {
  const ctx = c.get('ctx');
  const issuer = issuerOf(ctx.config, c.req.url);
  try {
    return { req: await parseAuthorizationRequest(ctx, params, issuer), issuer };
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
        use svc as <strong>{session.orgName}</strong> ({session.email}) through MCP.
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
        {PARAMS.map((p) =>
          props.params[p] === undefined ? null : <input type="hidden" name={p} value={props.params[p]} />,
        )}
        <div class="actions">
          <button type="submit" name="decision" value="approve">
            Approve
          </button>{' '}
          <button type="submit" name="decision" value="deny" class="secondary">
            Deny
          </button>
        </div>
      </form>
    </>
  );
}

oauthAuthorizeRoutes.get('/oauth/authorize', async (c) => {
  const query = c.req.query();
  const params: RequestParams = Object.fromEntries(PARAMS.map((p) => [p, query[p]]));
  const checked = await _validate(c, params);
  if (checked instanceof Response) return checked;
  requireWebSession(c);
  _allowRedirect(c, checked.req.redirectUri);
  return renderPage(c, { title: 'Connect an application' }, <Consent c={c} req={checked.req} params={params} />);
});

oauthAuthorizeRoutes.post('/oauth/authorize', async (c) => {
  const principal = requireWebSession(c);
  const entries = await Promise.all(PARAMS.map(async (p) => [p, await formString(c, p)] as const));
  const checked = await _validate(c, Object.fromEntries(entries));
  if (checked instanceof Response) return checked;
  const { req, issuer } = checked;
  const decision = await formString(c, 'decision');
  const to =
    decision === 'approve'
      ? await approveAuthorization(c.get('ctx'), req, { orgId: principal.orgId, userId: principal.userId! }, issuer)
      : denyAuthorization(req, issuer);
  return c.redirect(to, 303);
});
