/**
 * Issue 24 item 2: an agent's first hour on MCP ends in no dead end. Each case follows the step a refusal names (or
 * the behaviour the issue asked for) against the real control plane, gateway and MCP processes, and fails on the
 * behaviour the issue found: create_checkout for an unverified key, set_budget for a capped key, 403 forever for a
 * session whose key was revoked, sess_ tokens offered to a keyless agent, a silent second org from svc_register, a
 * `{placeholder}` forwarded (and charged), header injection without its name, search_apis for every not_found, a
 * bare object for a one-request batch, bound_to_session false for a bound key, plain text among the JSON log lines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantCredits, seedKey, seedOrg } from '../../helpers/db.js';
import { startSmtpSink, verifyTokenOf, type SmtpSink } from '../../helpers/smtp-sink.js';
import { call } from '../../helpers/http.js';
import { initializeBody, rawPost, startMcpFixture, type McpFixture } from './fixture.js';

let f: McpFixture;
let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await startSmtpSink();
  f = await startMcpFixture({ SVC_SMTP_URL: smtp.url });
}, 90_000);
afterAll(async () => {
  await f?.stop();
  await smtp?.close();
});

let rpcId = 100;
const toolCall = (name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: ++rpcId,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** A tools/call as `auth` (a bearer, or a session id); the result's structuredContent and isError. */
async function tool(name: string, args: Record<string, unknown>, auth: Record<string, string>) {
  const r = await rawPost(f.endpoint, toolCall(name, args), auth);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const result = r.json.result as { isError?: boolean; structuredContent: Record<string, any> };
  return { isError: result.isError === true, data: result.structuredContent };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function newSession(auth: Record<string, string> = {}): Promise<Record<string, string>> {
  const r = await rawPost(f.endpoint, initializeBody(), auth);
  expect(r.status).toBe(200);
  return { 'mcp-session-id': r.headers.get('mcp-session-id')! };
}

async function registered(): Promise<{ api_key: string; key_id: string; org_id: string }> {
  const res = await fetch(`${f.h.control.url}/v1/register`, { method: 'POST' });
  return (await res.json()) as { api_key: string; key_id: string; org_id: string };
}

describe('MCP: every next step leads somewhere (issue 24 item 2)', () => {
  it('an unverified key is sent to verify_email, which elevates the same key so create_checkout works', async () => {
    const reg = await registered();
    const broke = await tool('call_api', { slug: f.listing.slug, endpoint: '/items/1' }, bearer(reg.api_key));
    expect(broke.isError).toBe(true);
    expect(broke.data.error).toMatchObject({ code: 'insufficient_credits', next: { tool: 'verify_email' } });

    const email = `agent-${reg.key_id.slice(-8).toLowerCase()}@example.com`;
    const sent = await tool('verify_email', { email }, bearer(reg.api_key));
    expect(sent).toMatchObject({ isError: false, data: { status: 'verification_sent', verified: null } });
    const token = verifyTokenOf(await smtp.waitFor(email, /verif/i));
    const done = await tool('verify_email', { token }, bearer(reg.api_key));
    expect(done.data).toMatchObject({ status: 'verified', verified: { org_id: reg.org_id, email } });
    expect(done.data.verified.elevated_key_ids).toContain(reg.key_id);

    // The same key, elevated: the 403 step-up is gone (the principal cache drops the key on its change row).
    let checkout: Awaited<ReturnType<typeof rawPost>> | undefined;
    for (let i = 0; i < 40; i++) {
      checkout = await rawPost(f.endpoint, toolCall('create_checkout', { pack: 'starter' }), bearer(reg.api_key));
      if (checkout.status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(checkout!.status).toBe(200);
    expect(checkout!.json.result.structuredContent).toMatchObject({ human_action_required: true });
    expect(checkout!.json.result.structuredContent.checkout_url).toMatch(/^http/);
  });

  it('a capped key over its cap is told that a person raises it on the keys page, and set_budget says the same', async () => {
    const org = await seedOrg(f.db);
    await grantCredits(f.db, org.orgId, 100);
    const capped = await seedKey(f.db, org.orgId, { perCallMaxCents: 1 });
    const over = await tool('call_api', { slug: f.listing.slug, endpoint: '/items/1' }, bearer(capped.key));
    expect(over.data.error).toMatchObject({
      code: 'per_call_cap_exceeded',
      next: { url: `${f.h.control.url}/dashboard/keys` },
    });
    expect(over.data.error.next.tool).toBeUndefined();
    const raise = await tool('set_budget', { per_call_max_cents: 10 }, bearer(capped.key));
    expect(raise.data.error).toMatchObject({
      code: 'cap_escalation',
      next: { url: `${f.h.control.url}/dashboard/keys` },
    });
    const page = await fetch(over.data.error.next.url, { redirect: 'manual' });
    expect([200, 303]).toContain(page.status); // a page (or the sign-in it redirects to), not a problem+json
  });

  it('a revoked bearer is 401 invalid_token; a session bound to a revoked key recovers', async () => {
    const session = await newSession();
    const reg = await tool('svc_register', {}, session);
    expect(reg.data.bound_to_session).toBe(true);
    const revoked = await call(f.h.control.url, 'DELETE', `/v1/keys/${reg.data.key_id}`, { token: reg.data.api_key });
    expect(revoked.status).toBe(200);

    // The bearer: 401 with error="invalid_token" (RFC 6750), not 403.
    let asBearer: Awaited<ReturnType<typeof rawPost>> | undefined;
    for (let i = 0; i < 40; i++) {
      asBearer = await rawPost(f.endpoint, toolCall('get_balance'), bearer(reg.data.api_key));
      if (asBearer.status !== 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(asBearer!.status).toBe(401);
    expect(asBearer!.json).toMatchObject({ code: 'unauthorized', reason: 'key_revoked' });
    expect(asBearer!.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);

    // The session: one 401 that says why, then it acts keyless, so svc_register binds a new key.
    const first = await rawPost(f.endpoint, toolCall('get_balance'), session);
    expect(first.status).toBe(401);
    const again = await tool('svc_register', {}, session);
    expect(again).toMatchObject({ isError: false, data: { bound_to_session: true } });
    const bal = await tool('get_balance', {}, session);
    expect(bal.data.org_id).toBe(again.data.org_id);
    // An initialize carrying the old id starts a new session rather than being refused.
    const init = await rawPost(f.endpoint, initializeBody(), session);
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).not.toBe(session['mcp-session-id']);
  });

  it('a keyless call is pointed at svc_register or a key, never at sess_ tokens', async () => {
    const r = await tool('get_balance', {}, {});
    expect(r.isError).toBe(true);
    expect(r.data.error).toMatchObject({ code: 'unauthorized', next: { tool: 'svc_register' } });
    expect(JSON.stringify(r.data)).not.toContain('sess_');
  });

  it('svc_register in a session that acts as a key refuses unless replace: true', async () => {
    const session = await newSession();
    const first = await tool('svc_register', {}, session);
    const refused = await tool('svc_register', {}, session);
    expect(refused.isError).toBe(true);
    expect(refused.data.error.code).toBe('conflict');
    expect((await tool('get_balance', {}, session)).data.org_id).toBe(first.data.org_id); // still the first org
    const replaced = await tool('svc_register', { replace: true }, session);
    expect(replaced).toMatchObject({ isError: false, data: { bound_to_session: true } });
    expect(replaced.data.org_id).not.toBe(first.data.org_id);
    expect((await tool('get_balance', {}, session)).data.org_id).toBe(replaced.data.org_id);
  });

  it('provision_access says bound_to_session: true for the key bound to the session', async () => {
    const session = await newSession();
    await tool('svc_register', {}, session);
    const p = await tool('provision_access', {}, session);
    expect(p.data).toMatchObject({ provisioned: false, bound_to_session: true });
    const stateless = await tool('provision_access', {}, bearer(f.provider.key));
    expect(stateless.data).toMatchObject({ provisioned: false, bound_to_session: false });
  });

  it('a missing path parameter is refused before the call and never charged (MCP and the gateway alike)', async () => {
    const org = await seedOrg(f.db);
    await grantCredits(f.db, org.orgId, 50);
    const hitsBefore = f.upstream.requests.length;
    const r = await tool('call_api', { slug: f.listing.slug, endpoint: '/items/{id}' }, bearer(org.key));
    expect(r.isError).toBe(true);
    expect(r.data.error.code).toBe('validation_failed');
    expect(r.data.error.detail).toContain('{id}');
    const direct = await fetch(`${f.gateway.url}/${f.listing.slug}/items/%7Bid%7D`, { headers: bearer(org.key) });
    expect(direct.status).toBe(400);
    expect(((await direct.json()) as { code: string }).code).toBe('validation_failed');
    expect(f.upstream.requests.length).toBe(hitsBefore);
    const bal = await tool('get_balance', {}, bearer(org.key));
    expect(bal.data.credit_cents).toBe(50);
  });

  it('provider_set_credentials takes injection_name, so header injection works', async () => {
    const r = await tool(
      'provider_set_credentials',
      { api_id: f.listing.apiId, secret: 's3cret-value', injection: 'header', injection_name: 'X-Api-Key' },
      bearer(f.provider.key),
    );
    expect(r.isError, JSON.stringify(r.data)).toBe(false);
    expect(r.data.credentials).toMatchObject({ injection: 'header' });
    // Back to bearer for the other tests.
    await tool(
      'provider_set_credentials',
      { api_id: f.listing.apiId, secret: 'upstream-secret' },
      bearer(f.provider.key),
    );
  });

  it('not_found points where the missing thing can be found, not at search_apis', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['set_budget', { key_id: 'key_nope', budget_cents: 5 }, 'set_budget'],
      ['get_provider_profile', { slug: 'no-such-provider' }, 'list_providers'],
      ['provider_cancel_pending_pricing', { api_id: f.listing.apiId, endpoint_id: 'ep_nope' }, 'provider_get_api'],
      ['provider_get_api', { api_id: 'api_nope' }, 'provider_list_apis'],
    ];
    for (const [name, args, next] of cases) {
      const r = await tool(name, args, bearer(f.provider.key));
      expect(r.data.error?.code, name).toBe('not_found');
      expect(r.data.error.next.tool, name).toBe(next);
    }
    const fresh = await seedOrg(f.db);
    const none = await tool('get_my_profile', {}, bearer(fresh.key));
    expect(none.data.error).toMatchObject({ code: 'not_found', next: { tool: 'update_my_profile' } });
  });

  it('a one-request JSON-RPC batch is answered with an array', async () => {
    const session = await newSession();
    const r = await rawPost(f.endpoint, [toolCall('get_categories')], session);
    expect(r.status).toBe(200);
    expect(Array.isArray(r.json)).toBe(true);
    expect(r.json).toHaveLength(1);
    expect(r.json[0].result.structuredContent.data).toBeInstanceOf(Array);
  });

  it('every line the MCP process writes on stderr is a JSON log line', () => {
    const lines = f.mcp
      .stderr()
      .split('\n')
      .filter((l) => l.trim() !== '');
    // Tests run quiet (warnings and errors only): no line at all is fine; the SDK's notice came at every start.
    expect(f.mcp.stderr()).not.toContain('responseMode');
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  });
});
