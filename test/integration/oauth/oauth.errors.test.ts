import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Browser,
  authorize,
  authorizePath,
  discover,
  exchangeCode,
  pkcePair,
  postForm,
  registerClient,
  serveClientDocument,
  signIn,
} from '../../helpers/oauth.js';
import { resolveAccessToken } from '../../../control/oauth/access-token.js';
import { MCP_RESOURCE, newEmail, startOAuthFixture, type OAuthFixture } from './fixture.js';

let f: OAuthFixture;
let metadata: Record<string, any>;
let browser: Browser;
let email: string;
let clientId: string;
const redirectUri = 'http://127.0.0.1:33420/cb';

beforeAll(async () => {
  f = await startOAuthFixture();
  metadata = await discover(f.h.control.url);
  const reg = await registerClient(metadata, { client_name: 'Error cases', redirect_uris: [redirectUri] });
  clientId = reg.body.client_id;
  browser = new Browser(f.h.control.url);
  email = newEmail('errors');
  await signIn(browser, f.smtp, email, '/');
});
afterAll(() => f.stop());

async function codeFor(opts: { resource?: string } = {}) {
  const { verifier, challenge } = pkcePair();
  const back = await authorize(
    browser,
    f.smtp,
    email,
    authorizePath(metadata, { clientId, redirectUri, challenge, ...opts }),
  );
  return { code: back.searchParams.get('code')!, verifier };
}

function exchange(code: string, verifier: string, extra: Record<string, string> = {}) {
  return exchangeCode(metadata, { code, verifier, clientId, redirectUri, extra });
}

async function resolveCode(token: string, resource = MCP_RESOURCE) {
  try {
    await resolveAccessToken(f.tokenCtx, token, resource);
    return 'ok';
  } catch (e) {
    return (e as { code?: string }).code;
  }
}

describe('authorization request faults', () => {
  it('refuses plain PKCE (and a missing challenge) with invalid_request at the redirect URI', async () => {
    const plain = await browser.request(
      'GET',
      authorizePath(metadata, {
        clientId,
        redirectUri,
        challenge: 'x'.repeat(43),
        extra: { code_challenge_method: 'plain' },
      }),
    );
    expect(plain.status).toBe(303);
    const to = new URL(plain.headers.get('location')!);
    expect(to.origin + to.pathname).toBe(redirectUri);
    expect(to.searchParams.get('error')).toBe('invalid_request');
    expect(to.searchParams.get('error_description')).toMatch(/S256/);
    expect(to.searchParams.get('iss')).toBe(metadata.issuer);
    expect(to.searchParams.get('code')).toBeNull();

    const none = await browser.request(
      'GET',
      authorizePath(metadata, { clientId, redirectUri, challenge: '', extra: { code_challenge_method: 'S256' } }),
    );
    expect(new URL(none.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });

  it('refuses a resource other than the MCP endpoint with invalid_target', async () => {
    const res = await browser.request(
      'GET',
      authorizePath(metadata, {
        clientId,
        redirectUri,
        challenge: pkcePair().challenge,
        resource: 'https://evil.example/mcp',
      }),
    );
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');
  });

  it('shows an unknown client or an unregistered redirect_uri on the page and never redirects', async () => {
    const unknown = await browser.request(
      'GET',
      authorizePath(metadata, { clientId: 'oc_nope', redirectUri, challenge: pkcePair().challenge }),
    );
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('invalid_client');
    const foreign = await browser.request(
      'GET',
      authorizePath(metadata, { clientId, redirectUri: 'https://evil.example/cb', challenge: pkcePair().challenge }),
    );
    expect(foreign.status).toBe(400);
    expect(foreign.headers.get('location')).toBeNull();
  });

  it('answers access_denied when the person denies, and issues nothing', async () => {
    const before = await f.db.db.selectFrom('oauth_grants').select('id').execute();
    const back = await authorize(
      browser,
      f.smtp,
      email,
      authorizePath(metadata, { clientId, redirectUri, challenge: pkcePair().challenge, state: 's1' }),
      'deny',
    );
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('s1');
    expect(await f.db.db.selectFrom('oauth_grants').select('id').execute()).toHaveLength(before.length);
  });

  it('accepts a loopback redirect on another port (RFC 8252) but not another path', async () => {
    const { challenge } = pkcePair();
    const otherPort = await browser.request(
      'GET',
      authorizePath(metadata, { clientId, redirectUri: 'http://127.0.0.1:40001/cb', challenge }),
    );
    expect(otherPort.status).toBe(200);
    const otherPath = await browser.request(
      'GET',
      authorizePath(metadata, { clientId, redirectUri: 'http://127.0.0.1:33420/other', challenge }),
    );
    expect(otherPath.status).toBe(400);
  });
});

describe('token endpoint faults (RFC 6749 error JSON)', () => {
  it('refuses a wrong code_verifier with invalid_grant', async () => {
    const { code } = await codeFor();
    const res = await exchange(code, pkcePair().verifier);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body).toMatchObject({ error: 'invalid_grant' });
    expect(typeof res.body.error_description).toBe('string');
  });

  it('refuses a wrong resource at the exchange with invalid_target, and a token for another resource', async () => {
    const { code, verifier } = await codeFor({ resource: MCP_RESOURCE });
    const wrong = await exchange(code, verifier, { resource: 'https://evil.example/mcp' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_target');
    const ok = await exchange(code, verifier, { resource: MCP_RESOURCE });
    expect(ok.status).toBe(200);
    expect(await resolveCode(ok.body.access_token)).toBe('ok');
    expect(await resolveCode(ok.body.access_token, 'https://evil.example/mcp')).toBe('unauthorized');
  });

  it('refuses a reused code with invalid_grant and revokes what the first use issued', async () => {
    const { code, verifier } = await codeFor();
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    const second = await exchange(code, verifier);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    expect(await resolveCode(first.body.access_token)).toBe('unauthorized');
    const refresh = await postForm(metadata.token_endpoint, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
      client_id: clientId,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('refuses a reused refresh token with invalid_grant and revokes the whole family', async () => {
    const { code, verifier } = await codeFor();
    const issued = await exchange(code, verifier);
    const refresh = (token: string) =>
      postForm(metadata.token_endpoint, { grant_type: 'refresh_token', refresh_token: token, client_id: clientId });
    const rotated = await refresh(issued.body.refresh_token);
    expect(rotated.status).toBe(200);
    const replay = await refresh(issued.body.refresh_token);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    // The newer pair, which only the legitimate client should hold, is revoked as well.
    expect(await resolveCode(rotated.body.access_token)).toBe('unauthorized');
    expect((await refresh(rotated.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('names unsupported grant types and non-form bodies', async () => {
    const grant = await postForm(metadata.token_endpoint, { grant_type: 'password', client_id: clientId });
    expect(grant.body.error).toBe('unsupported_grant_type');
    const json = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code' }),
    });
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('a token issued to another client is neither exchanged nor revoked by this one', async () => {
    const { code, verifier } = await codeFor();
    const other = await registerClient(metadata, { redirect_uris: [redirectUri] });
    const stolen = await exchangeCode(metadata, { code, verifier, clientId: other.body.client_id, redirectUri });
    expect(stolen.body.error).toBe('invalid_grant');
    const mine = await exchange(code, verifier);
    const revoke = await postForm(metadata.revocation_endpoint, {
      token: mine.body.refresh_token,
      client_id: other.body.client_id,
    });
    expect(revoke.status).toBe(200);
    expect(await resolveCode(mine.body.access_token)).toBe('ok');
  });
});

describe('client registration faults', () => {
  it('refuses http redirect URIs off loopback and unsupported grant types', async () => {
    const http = await registerClient(metadata, { redirect_uris: ['http://example.com/cb'] });
    expect(http.status).toBe(400);
    expect(http.body.error).toBe('invalid_redirect_uri');
    const grant = await registerClient(metadata, { redirect_uris: [redirectUri], grant_types: ['client_credentials'] });
    expect(grant.body.error).toBe('invalid_client_metadata');
    const none = await registerClient(metadata, {});
    expect(none.body.error).toBe('invalid_redirect_uri');
    const userInfo = await registerClient(metadata, { redirect_uris: ['https://trusted.example@evil.example/cb'] });
    expect(userInfo.status).toBe(400);
    expect(userInfo.body.error).toBe('invalid_redirect_uri');
  });

  it('answers every registration as a public client, whatever auth method was asked', async () => {
    const reg = await registerClient(metadata, {
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(reg.status).toBe(201);
    expect(reg.body.token_endpoint_auth_method).toBe('none');
    expect(reg.body.client_secret).toBeUndefined();
  });

  it('refuses a metadata document whose client_id is not its own URL', async () => {
    const doc = await serveClientDocument(() => ({
      client_id: 'https://other.example/c.json',
      redirect_uris: [redirectUri],
    }));
    try {
      const res = await browser.request(
        'GET',
        authorizePath(metadata, { clientId: doc.clientId, redirectUri, challenge: pkcePair().challenge }),
      );
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('invalid_client');
    } finally {
      await doc.close();
    }
  });
});
