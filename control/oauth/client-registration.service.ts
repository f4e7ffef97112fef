/**
 * Dynamic Client Registration (RFC 7591), the fallback for clients without a metadata document. Every client is
 * public (`token_endpoint_auth_method: none`, PKCE instead of a secret): a request for a secret-based method is
 * answered with `none`, as RFC 7591 §3.2.1 allows the server to replace values.
 */
import { ClientRegistrationRequest, type ClientRegistrationResponse } from '../../core/schemas/oauth.schemas.js';
import type { AppContext } from '../context.js';
import { newId } from '../../core/ids.js';
import { OAuthError } from './oauth-error.js';
import { redirectUriProblem } from './redirect-uri.js';
import { REQUESTABLE_SCOPES } from './oauth-settings.js';
import { isStepUpScope } from './step-up.js';

const GRANT_TYPES = ['authorization_code', 'refresh_token'];

/** @public Open dynamic client registration (RFC 7591): anyone registers a client. */
export async function registerClient(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  body: unknown,
): Promise<ClientRegistrationResponse> {
  const parsed = ClientRegistrationRequest.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const field = first ? first.path.map(String).join('.') : '(body)';
    const code = field.startsWith('redirect_uris') ? 'invalid_redirect_uri' : 'invalid_client_metadata';
    throw new OAuthError(code, `${field || '(body)'}: ${first?.message ?? 'invalid'}`);
  }
  const req = parsed.data;
  for (const uri of req.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `${uri.slice(0, 200)}: ${problem}`);
  }
  const grantTypes = req.grant_types ?? ['authorization_code', 'refresh_token'];
  const badGrant = grantTypes.find((g) => !GRANT_TYPES.includes(g));
  if (badGrant)
    throw new OAuthError(
      'invalid_client_metadata',
      `grant_types: ${badGrant} is not supported (authorization_code, refresh_token)`,
    );
  const responseTypes = req.response_types ?? ['code'];
  if (responseTypes.some((r) => r !== 'code'))
    throw new OAuthError('invalid_client_metadata', 'response_types: only "code" is supported');
  const badScope = req.scope?.split(' ').find((s) => s && !REQUESTABLE_SCOPES.includes(s) && !isStepUpScope(s));
  if (badScope) throw new OAuthError('invalid_client_metadata', `scope: unknown scope ${badScope.slice(0, 50)}`);

  const now = ctx.clock.now();
  const clientId = newId('oc', now);
  const response: ClientRegistrationResponse = {
    client_id: clientId,
    client_id_issued_at: Math.floor(now / 1000),
    ...(req.client_name ? { client_name: req.client_name } : {}),
    redirect_uris: req.redirect_uris,
    grant_types: grantTypes,
    response_types: responseTypes,
    token_endpoint_auth_method: 'none',
    ...(req.scope ? { scope: req.scope } : {}),
  };
  await ctx.db
    .insertInto('oauth_clients')
    .values({
      id: clientId,
      kind: 'registered',
      client_name: req.client_name ?? null,
      redirect_uris: JSON.stringify(req.redirect_uris),
      metadata: JSON.stringify(response),
      created_at: now,
      fetched_at: null,
    })
    .execute();
  return response;
}
