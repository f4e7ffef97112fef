import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Browser,
  authorizePath,
  discover,
  exchangeCode,
  formFields,
  pkcePair,
  postForm,
  registerClient,
} from '../../helpers/oauth.js';
import { loginCodeOf } from '../../helpers/smtp-sink.js';
import { call } from '../../helpers/http.js';
import { resolveAccessToken } from '../../../control/oauth/access-token.js';
import { stepUpScope } from '../../../control/oauth/step-up.js';
import { MCP_RESOURCE, newEmail, startOAuthFixture, type OAuthFixture } from './fixture.js';

let f: OAuthFixture;
let metadata: Record<string, any>;
let clientId: string;
const redirectUri = 'http://127.0.0.1:33421/cb';

beforeAll(async () => {
  f = await startOAuthFixture();
  metadata = await discover(f.h.control.url);
  clientId = (await registerClient(metadata, { client_name: 'Step-up agent', redirect_uris: [redirectUri] })).body
    .client_id;
});
afterAll(() => f.stop());

/** An agent registers anonymously, then gets the scope the MCP server's 403 would carry for its key. */
async function registeredAgent() {
  const reg = await call(f.h.control.url, 'POST', '/v1/register');
  const scope = await stepUpScope(f.tokenCtx, { keyId: reg.body.key_id, plaintext: reg.body.api_key });
  return { key: reg.body.api_key as string, keyId: reg.body.key_id as string, orgId: reg.body.org_id as string, scope };
}

/** The person's side of a step-up: email, code, approve. Returns the final response. */
async function stepUpInBrowser(path: string, email: string) {
  const browser = new Browser(f.h.control.url);
  const first = await browser.request('GET', path);
  expect(first.status).toBe(200);
  const emailPage = await first.text();
  expect(emailPage).toContain('not verified by svc');
  const sent = await browser.request('POST', '/oauth/authorize/email', {
    ...formFields(emailPage, '/oauth/authorize/email'),
    email,
  });
  expect(sent.status).toBe(200);
  const codePage = await sent.text();
  const code = loginCodeOf(await f.smtp.waitFor(email, /code/i));
  return browser.request('POST', '/oauth/authorize', {
    ...formFields(codePage, '/oauth/authorize'),
    code,
    decision: 'approve',
  });
}

describe('step-up: OAuth approval elevates the registered key itself', () => {
  it('verifies the email for the agent org and the access token acts as the same, now full-scope, key', async () => {
    const agent = await registeredAgent();
    expect(agent.scope).toMatch(/^billing:write provider:write svc_key:[0-9A-Za-z]{32}$/);
    const { verifier, challenge } = pkcePair();
    const email = newEmail('stepup');
    const done = await stepUpInBrowser(
      authorizePath(metadata, { clientId, redirectUri, challenge, scope: agent.scope, state: 'st' }),
      email,
    );
    expect(done.status).toBe(303);
    const back = new URL(done.headers.get('location')!);
    expect(back.searchParams.get('state')).toBe('st');
    const token = await exchangeCode(metadata, {
      code: back.searchParams.get('code')!,
      verifier,
      clientId,
      redirectUri,
    });
    expect(token.status).toBe(200);
    expect(token.body.scope).not.toContain('svc_key:');

    const resolved = await resolveAccessToken(f.tokenCtx, token.body.access_token, MCP_RESOURCE);
    expect(resolved.principal.keyId).toBe(agent.keyId);
    expect(resolved.principal.orgId).toBe(agent.orgId);
    expect(resolved.principal.scopes.has('billing:write')).toBe(true);
    expect(resolved.gatewayKey).toBe(agent.key);
    // The bearer key itself is elevated: no second key was minted.
    const me = await call(f.h.control.url, 'GET', '/v1/me', { token: agent.key });
    expect(JSON.stringify(me.body)).toContain('provider:write');
    const keys = await f.db.db.selectFrom('api_keys').select('id').where('org_id', '=', agent.orgId).execute();
    expect(keys).toHaveLength(1);
    const user = await f.db.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    expect(user).toMatchObject({ org_id: agent.orgId, role: 'owner' });

    // Revoking the grant ends the tokens but not the agent's own key.
    await postForm(metadata.revocation_endpoint, { token: token.body.refresh_token, client_id: clientId });
    expect((await call(f.h.control.url, 'GET', '/v1/me', { token: agent.key })).status).toBe(200);
  });

  it('a handle works once: the second request falls back to sign-in (a new key in the signed-in account)', async () => {
    const agent = await registeredAgent();
    const path = authorizePath(metadata, {
      clientId,
      redirectUri,
      challenge: pkcePair().challenge,
      scope: agent.scope,
    });
    expect((await stepUpInBrowser(path, newEmail('once'))).status).toBe(303);
    const again = await new Browser(f.h.control.url).request('GET', path);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toMatch(/^\/login\?next=/);
  });

  it('an email that already has an account cannot own the agent org: 409 page, key unchanged', async () => {
    const taken = newEmail('taken');
    await call(f.h.control.url, 'POST', '/v1/auth/login/request', { body: { email: taken } });
    const login = loginCodeOf(await f.smtp.waitFor(taken, /code/i));
    await call(f.h.control.url, 'POST', '/v1/auth/login/verify', { body: { email: taken, code: login } });

    const agent = await registeredAgent();
    const res = await stepUpInBrowser(
      authorizePath(metadata, { clientId, redirectUri, challenge: pkcePair().challenge, scope: agent.scope }),
      taken,
    );
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('already has an svc account');
    const key = await f.db.db
      .selectFrom('api_keys')
      .select('scopes')
      .where('id', '=', agent.keyId)
      .executeTakeFirstOrThrow();
    expect(key.scopes).not.toContain('billing:write');
    expect(await f.db.db.selectFrom('oauth_grants').select('id').where('key_id', '=', agent.keyId).execute()).toEqual(
      [],
    );
  });

  it('a key that cannot be elevated gets only the missing scopes, no handle', async () => {
    const agent = await registeredAgent();
    await call(f.h.control.url, 'DELETE', `/v1/keys/${agent.keyId}`, { token: agent.key });
    expect(await stepUpScope(f.tokenCtx, { keyId: agent.keyId, plaintext: agent.key })).toBe(
      'billing:write provider:write',
    );
  });
});
