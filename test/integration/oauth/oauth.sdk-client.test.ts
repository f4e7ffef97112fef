/**
 * The MCP SDK's own OAuth client (`auth()` from @modelcontextprotocol/sdk, what StreamableHTTPClientTransport runs)
 * against the authorization server: discovery, Dynamic Client Registration, PKCE, code exchange, refresh, and the
 * SDK's parsing of our RFC 6749 error JSON. The person's browser part is the headless helper.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  OAuthMetadataSchema,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { Browser, authorize, discover } from '../../helpers/oauth.js';
import { resolveAccessToken } from '../../../control/oauth/access-token.js';
import { MCP_RESOURCE, newEmail, startOAuthFixture, type OAuthFixture } from './fixture.js';

let f: OAuthFixture;
beforeAll(async () => {
  f = await startOAuthFixture();
});
afterAll(() => f.stop());

class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly redirectUrl = 'http://127.0.0.1:33422/callback';
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('the MCP SDK OAuth client', () => {
  it('registers, authorizes, exchanges and refreshes against svc', async () => {
    const provider = new MemoryProvider();
    const serverUrl = f.h.control.url;
    expect(await auth(provider, { serverUrl })).toBe('REDIRECT');
    expect(provider.info?.client_id).toMatch(/^oc_/);
    const url = provider.authorizationUrl!;
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');

    const browser = new Browser(serverUrl);
    const back = await authorize(browser, f.smtp, newEmail('sdk'), url.pathname + url.search);
    const code = back.searchParams.get('code')!;
    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED');
    const first = provider.saved!;
    expect((await resolveAccessToken(f.tokenCtx, first.access_token, MCP_RESOURCE)).principal.kind).toBe('key');

    // With a refresh token stored, auth() refreshes (rotation: a new refresh token comes back).
    expect(await auth(provider, { serverUrl })).toBe('AUTHORIZED');
    expect(provider.saved!.refresh_token).not.toBe(first.refresh_token);

    // Our error JSON is what the SDK parses: a spent refresh token is its InvalidGrantError.
    const metadata = await discover(serverUrl);
    await expect(
      refreshAuthorization(serverUrl, {
        metadata: OAuthMetadataSchema.parse(metadata),
        clientInformation: provider.info!,
        refreshToken: first.refresh_token!,
      }),
    ).rejects.toBeInstanceOf(InvalidGrantError);
  });
});
