/**
 * Validates an authorization request (OAuth 2.1 §4.1.1 with PKCE S256 and RFC 8707 `resource`). Faults that make
 * the redirect untrustworthy (unknown client, unregistered redirect_uri) are shown on the page, never redirected;
 * every other fault goes back to the client's redirect_uri as `error=…` (OAuth 2.1 §4.1.2.1).
 */
import type { AppContext } from '../context.js';
import { OAuthError, type OAuthErrorCode } from './oauth-error.js';
import { resolveClient } from './clients.service.js';
import { redirectUriMatches } from './redirect-uri.js';
import { isS256Challenge } from './pkce.js';
import { REQUESTABLE_SCOPES, mcpResourceOf, sameResource } from './oauth-settings.js';
import type { OAuthClient } from './oauth-client.js';
import { findStepUp, isStepUpScope, type StepUp } from './step-up.js';

export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  resource: string;
  scope: string;
  /** Set when the scope carries a valid step-up handle: approval may elevate that registered key. */
  stepUp: StepUp | undefined;
}

/** A fault to show the person: the client or its redirect URI cannot be trusted with a redirect. */
export class AuthorizationPageError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
    this.name = 'AuthorizationPageError';
  }
}

/** A fault to report to the client at its redirect URI. */
export class AuthorizationRedirectError extends Error {
  constructor(
    readonly redirectTo: string,
    readonly error: OAuthErrorCode,
  ) {
    super(error);
    this.name = 'AuthorizationRedirectError';
  }
}

export type RequestParams = Readonly<Record<string, string | undefined>>;

/** The authorization response address: `redirect_uri` plus the given parameters, `state` and `iss` (RFC 9207). */
export function redirectWith(
  redirectUri: string,
  params: Record<string, string>,
  state: string | undefined,
  issuer: string,
): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (state !== undefined) url.searchParams.set('state', state);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

export async function parseAuthorizationRequest(
  ctx: Pick<AppContext, 'db' | 'clock' | 'config'>,
  params: RequestParams,
  issuer: string,
): Promise<AuthorizationRequest> {
  const clientId = params.client_id;
  if (!clientId) throw new AuthorizationPageError('invalid_request', 'The request has no client_id.');
  let client: OAuthClient;
  try {
    client = await resolveClient(ctx, clientId);
  } catch (e) {
    if (e instanceof OAuthError) throw new AuthorizationPageError(e.error, e.description);
    throw e;
  }
  const requested = params.redirect_uri;
  let redirectUri: string;
  if (requested === undefined) {
    if (client.redirectUris.length !== 1)
      throw new AuthorizationPageError(
        'invalid_request',
        'The request has no redirect_uri and the client registered several.',
      );
    redirectUri = client.redirectUris[0]!;
  } else if (redirectUriMatches(client.redirectUris, requested)) {
    redirectUri = requested;
  } else {
    throw new AuthorizationPageError('invalid_request', 'The redirect_uri is not one the client registered.');
  }

  const state = params.state;
  const fail = (error: OAuthErrorCode, description: string): never => {
    throw new AuthorizationRedirectError(
      redirectWith(redirectUri, { error, error_description: description }, state, issuer),
      error,
    );
  };
  if (params.response_type !== 'code') fail('unsupported_response_type', 'Only response_type=code is supported');
  const challenge = params.code_challenge;
  if (!challenge) fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256');
  if (params.code_challenge_method !== 'S256')
    fail('invalid_request', 'code_challenge_method must be S256 (plain, or none given, is refused)');
  if (!isS256Challenge(challenge!)) fail('invalid_request', 'code_challenge must be 43 base64url characters (S256)');

  const mcpResource = mcpResourceOf(ctx.config);
  const resource = params.resource ?? mcpResource;
  if (!sameResource(resource, mcpResource))
    fail('invalid_target', `Tokens are issued for the MCP resource ${mcpResource} only`);

  const scopes = (params.scope ?? '').split(' ').filter(Boolean);
  const unknown = scopes.find((s) => !REQUESTABLE_SCOPES.includes(s) && !isStepUpScope(s));
  if (unknown) fail('invalid_scope', `Unknown scope: ${unknown.slice(0, 50)}`);

  return {
    client,
    redirectUri,
    state,
    codeChallenge: challenge!,
    resource: mcpResource,
    scope: scopes.filter((s) => !isStepUpScope(s)).join(' '),
    stepUp: await findStepUp(ctx.db, scopes, ctx.clock.now()),
  };
}
