/**
 * The OAuth 2.1 authorization server's machine endpoints on the control plane: RFC 8414 metadata, the token
 * endpoint (form-encoded, RFC 6749 §4.1.3 / §6), Dynamic Client Registration (RFC 7591) and revocation (RFC 7009).
 * Errors here are RFC 6749 error JSON, not problem+json. The authorization page is control/web/oauth-authorize.tsx.
 */
import { Hono, type Context } from 'hono';
import { cors } from 'hono/cors';
import type { AppEnv } from '../lib/http.js';
import { clientIp } from '../lib/client-ip.js';
import { OAuthError, oauthErrorResponse } from './oauth-error.js';
import { authorizationServerMetadata } from './metadata.js';
import { issuerOf } from './oauth-settings.js';
import { registerClient } from './client-registration.service.js';
import { exchangeAuthorizationCode, refreshAccessToken, revokeToken, type TokenParams } from './tokens.service.js';

export const oauthRoutes = new Hono<AppEnv>();

// Browser-based MCP clients call these cross-origin; none of them reads a cookie.
const publicCors = cors({ origin: '*', allowMethods: ['GET', 'POST', 'OPTIONS'], maxAge: 86_400 });
for (const path of ['/.well-known/oauth-authorization-server', '/oauth/token', '/oauth/register', '/oauth/revoke'])
  oauthRoutes.use(path, publicCors);

oauthRoutes.onError((e, c) => {
  if (e instanceof OAuthError) return oauthErrorResponse(c, e);
  throw e;
});

oauthRoutes.get('/.well-known/oauth-authorization-server', (c) => {
  c.header('cache-control', 'public, max-age=300');
  return c.json(authorizationServerMetadata(issuerOf(c.get('ctx').config, c.req.url)));
});

/** Form fields of an OAuth POST; a public client may also name itself in HTTP Basic with an empty secret. */
async function formParams(c: Context<AppEnv>): Promise<TokenParams> {
  const type = c.req.header('content-type') ?? '';
  if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded'))
    throw new OAuthError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded');
  const body = await c.req.parseBody();
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string') params[k] = v;
  const basic = /^Basic\s+(\S+)$/i.exec(c.req.header('authorization') ?? '');
  if (basic && params.client_id === undefined) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const [id, secret] = decoded.split(':');
    if (secret) throw new OAuthError('invalid_client', 'Clients here are public: authenticate with PKCE, not a secret');
    if (id) params.client_id = decodeURIComponent(id);
  }
  return params;
}

function noStore(c: Context<AppEnv>): void {
  c.header('cache-control', 'no-store');
  c.header('pragma', 'no-cache');
}

oauthRoutes.post('/oauth/token', async (c) => {
  const ctx = c.get('ctx');
  const params = await formParams(c);
  noStore(c);
  switch (params.grant_type) {
    case 'authorization_code':
      return c.json(await exchangeAuthorizationCode(ctx, params));
    case 'refresh_token':
      return c.json(await refreshAccessToken(ctx, params));
    case undefined:
      throw new OAuthError('invalid_request', 'grant_type is required');
    default:
      throw new OAuthError('unsupported_grant_type', 'Supported grant types: authorization_code, refresh_token');
  }
});

oauthRoutes.post('/oauth/revoke', async (c) => {
  await revokeToken(c.get('ctx'), await formParams(c));
  noStore(c);
  return c.body(null, 200);
});

oauthRoutes.post('/oauth/register', async (c) => {
  const ctx = c.get('ctx');
  // Registrations share the per-address budget of POST /v1/register: both create a record for an anonymous caller.
  const retryAfter = ctx.limiters.register.take(clientIp(c), ctx.clock.now());
  if (retryAfter > 0)
    throw new OAuthError('slow_down', `Too many registrations; retry in ${retryAfter} s`, { retryAfter });
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new OAuthError('invalid_client_metadata', 'The registration request must be a JSON object');
  }
  noStore(c);
  return c.json(await registerClient(ctx, body), 201);
});
