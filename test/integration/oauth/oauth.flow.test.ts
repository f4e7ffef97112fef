import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForm, runOAuthFlow, serveClientDocument, type OAuthFlowResult } from '../../helpers/oauth.js';
import { resolveAccessToken } from '../../../control/oauth/access-token.js';
import { principalFromToken } from '../../../control/auth/principal.js';
import { MCP_RESOURCE, newEmail, startOAuthFixture, type OAuthFixture } from './fixture.js';

let f: OAuthFixture;
beforeAll(async () => {
  f = await startOAuthFixture();
});
afterAll(() => f.stop());

async function resolveError(token: string, resource = MCP_RESOURCE): Promise<string | undefined> {
  try {
    await resolveAccessToken(f.tokenCtx, token, resource);
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
}

/** Refresh with rotation, then revoke: the part of the flow both client kinds share. */
async function refreshThenRevoke(flow: OAuthFlowResult) {
  const { metadata, clientId } = flow;
  const first = await resolveAccessToken(f.tokenCtx, flow.tokens.access_token, MCP_RESOURCE);

  const refreshed = await postForm(metadata.token_endpoint, {
    grant_type: 'refresh_token',
    refresh_token: flow.tokens.refresh_token,
    client_id: clientId,
  });
  expect(refreshed.status).toBe(200);
  expect(refreshed.headers.get('cache-control')).toBe('no-store');
  expect(refreshed.body.refresh_token).not.toBe(flow.tokens.refresh_token);
  const second = await resolveAccessToken(f.tokenCtx, refreshed.body.access_token, MCP_RESOURCE);
  expect(second.principal).toEqual(first.principal);

  const revoked = await postForm(metadata.revocation_endpoint, {
    token: refreshed.body.refresh_token,
    token_type_hint: 'refresh_token',
    client_id: clientId,
  });
  expect(revoked.status).toBe(200);
  // Revoking the refresh token ends the grant: every access token of the family and the minted key with it.
  expect(await resolveError(refreshed.body.access_token)).toBe('unauthorized');
  expect(await resolveError(flow.tokens.access_token)).toBe('unauthorized');
  const key = await f.db.db
    .selectFrom('api_keys')
    .select('revoked_at')
    .where('id', '=', first.principal.keyId!)
    .executeTakeFirstOrThrow();
  expect(key.revoked_at).not.toBeNull();
  const again = await postForm(metadata.token_endpoint, {
    grant_type: 'refresh_token',
    refresh_token: refreshed.body.refresh_token,
    client_id: clientId,
  });
  expect(again.status).toBe(400);
  expect(again.body.error).toBe('invalid_grant');
}

describe('authorization server metadata (RFC 8414)', () => {
  it('names the endpoints, PKCE S256 only, public clients and client metadata documents', async () => {
    const res = await fetch(`${f.h.control.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const m = (await res.json()) as Record<string, unknown>;
    expect(m).toMatchObject({
      issuer: f.h.control.url,
      authorization_endpoint: `${f.h.control.url}/oauth/authorize`,
      token_endpoint: `${f.h.control.url}/oauth/token`,
      registration_endpoint: `${f.h.control.url}/oauth/register`,
      revocation_endpoint: `${f.h.control.url}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
    });
  });
});

describe('the full flow with Dynamic Client Registration', () => {
  it('registers, signs in with the emailed code, approves, exchanges the code, refreshes with rotation, revokes', async () => {
    const email = newEmail('dcr');
    const flow = await runOAuthFlow({ controlUrl: f.h.control.url, smtp: f.smtp, email, resource: MCP_RESOURCE });
    expect(flow.clientId).toMatch(/^oc_/);
    expect(flow.tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(flow.tokens.access_token).toMatch(/^svc_at_/);
    expect(flow.tokens.scope.split(' ')).toEqual(expect.arrayContaining(['billing:write', 'provider:write']));

    const resolved = await resolveAccessToken(f.tokenCtx, flow.tokens.access_token, MCP_RESOURCE);
    const user = await f.db.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    expect(resolved.principal).toMatchObject({ kind: 'key', orgId: user.org_id, userId: user.id, sessionId: null });
    expect([...resolved.principal.scopes].sort()).toEqual(
      ['billing:write', 'catalog:read', 'keys:write', 'provider:write', 'proxy:call', 'usage:read'].sort(),
    );
    // The key the grant acts as is a real bearer key of the org (the MCP server calls the gateway with it), and
    // the token's Principal is exactly the one that key gives as a bearer.
    expect(resolved.gatewayKey).toMatch(/^svc_live_/);
    expect(resolved.principal).toEqual(await principalFromToken(f.tokenCtx, resolved.gatewayKey!));
    const me = await fetch(`${f.h.control.url}/v1/me`, { headers: { authorization: `Bearer ${resolved.gatewayKey}` } });
    expect(me.status).toBe(200);
    expect(JSON.stringify(await me.json())).toContain(user.org_id);

    await refreshThenRevoke(flow);
  });
});

describe('the full flow with a Client ID Metadata Document', () => {
  it('fetches the document once (cached), shows its name as unverified, and issues tokens to the URL client_id', async () => {
    const redirectUri = 'http://127.0.0.1:33419/callback';
    const doc = await serveClientDocument((clientId) => ({
      client_id: clientId,
      client_name: 'Doc Agent <b>',
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
    }));
    try {
      const email = newEmail('cimd');
      const flow = await runOAuthFlow({
        controlUrl: f.h.control.url,
        smtp: f.smtp,
        email,
        clientId: doc.clientId,
        redirectUri,
      });
      expect(flow.clientId).toBe(doc.clientId);
      const fetchesAfterFirst = doc.fetches();
      expect(fetchesAfterFirst).toBe(1);

      // The consent page names the client as the document says, escaped and marked unverified.
      const page = await flow.browser.request(
        'GET',
        `/oauth/authorize?response_type=code&client_id=${encodeURIComponent(doc.clientId)}&redirect_uri=${encodeURIComponent(redirectUri)}&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`,
      );
      const html = await page.text();
      expect(page.status).toBe(200);
      expect(html).toContain('Doc Agent &lt;b&gt;');
      expect(html).toContain('not verified by svc');
      expect(doc.fetches()).toBe(fetchesAfterFirst);

      // No resource was sent: the token is bound to the MCP resource by default.
      const resolved = await resolveAccessToken(f.tokenCtx, flow.tokens.access_token, MCP_RESOURCE);
      expect(resolved.principal.kind).toBe('key');
      await refreshThenRevoke(flow);
    } finally {
      await doc.close();
    }
  });
});
