/**
 * The 2025-11-25 era with the v1 SDK's own Client and StreamableHTTPClientTransport against the real processes:
 * tool list = the spec's tables, register in-session then call, a session surviving an MCP restart, DELETE,
 * bearer keys, 401/403 challenges, paid calls and the idempotent retry, DNS-rebinding refusal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { grantCredits, seedKey, seedOrg } from '../../helpers/db.js';
import { REGISTER_SCOPES } from '../../../core/scopes.js';
import { initializeBody, rawPost, startMcpFixture, type McpFixture } from './fixture.js';
import { REQUIRED, SPEC_TOOLS } from './spec-tools.js';

let f: McpFixture;
beforeAll(async () => {
  f = await startMcpFixture();
}, 120_000);
afterAll(() => f.stop());

async function connect(opts: { key?: string; sessionId?: string } = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(f.endpoint), {
    ...(opts.key ? { requestInit: { headers: { authorization: `Bearer ${opts.key}` } } } : {}),
    ...(opts.sessionId ? { sessionId: opts.sessionId } : {}),
  });
  const client = new Client({ name: 'v1-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const structured = (r: unknown) => (r as { structuredContent: Record<string, any> }).structuredContent;

describe('MCP 2025-11-25 sessions (v1 SDK client)', () => {
  it('lists exactly the spec tables: names, parameters, required ones, output schemas and annotations', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(Object.keys(SPEC_TOOLS));
    for (const t of tools) {
      expect(Object.keys(t.inputSchema.properties ?? {}).sort(), t.name).toEqual([...SPEC_TOOLS[t.name]!].sort());
      expect([...(t.inputSchema.required ?? [])].sort(), t.name).toEqual([...(REQUIRED[t.name] ?? [])].sort());
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(typeof t.annotations?.readOnlyHint, t.name).toBe('boolean');
      expect(t.description!.length, t.name).toBeGreaterThan(40);
    }
    await client.close();
  });

  it('registers inside the session, then calls a free API with the bound key', async () => {
    const { client } = await connect();
    const reg = structured(await client.callTool({ name: 'svc_register', arguments: {} }));
    expect(reg.api_key).toMatch(/^svc_live_/);
    expect(reg.bound_to_session).toBe(true);
    expect(reg.scopes).toEqual([...REGISTER_SCOPES]);
    const call = await client.callTool({
      name: 'call_api',
      arguments: { slug: f.listing.slug, endpoint: '/ping' },
    });
    expect(call.isError).toBeFalsy();
    expect(structured(call)).toMatchObject({ status: 200, charged_cents: 0, price_cents: 0 });
    expect(JSON.parse(structured(call).body)).toMatchObject({ ok: true, path: '/ping' });
    const usage = await f.db.db
      .selectFrom('usage_events')
      .select(['key_id'])
      .where('id', '=', structured(call).request_id)
      .executeTakeFirstOrThrow();
    expect(usage.key_id).toBe(reg.key_id);
    await client.close();
  });

  it('keeps the session and its key across an MCP server restart', async () => {
    const { client, transport } = await connect();
    const reg = structured(await client.callTool({ name: 'svc_register', arguments: {} }));
    const sessionId = transport.sessionId!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const stored = await f.db.db.selectFrom('mcp_sessions').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(sessionId); // hashed
    expect(JSON.stringify(stored)).not.toContain(reg.api_key); // encrypted

    await f.restartMcp();
    const again = await connect({ sessionId });
    const bal = structured(await again.client.callTool({ name: 'get_balance', arguments: {} }));
    expect(bal.org_id).toBe(reg.org_id);
  }, 30_000);

  it('DELETE ends a session; the id then answers 404 problem+json', async () => {
    const init = await rawPost(f.endpoint, initializeBody());
    const sid = init.headers.get('mcp-session-id')!;
    expect(init.status).toBe(200);
    const del = await fetch(f.endpoint, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    expect(del.status).toBe(204);
    const after = await rawPost(f.endpoint, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sid });
    expect(after.status).toBe(404);
    expect(after.headers.get('content-type')).toContain('application/problem+json');
    expect(after.json).toMatchObject({ code: 'not_found', request_id: expect.stringMatching(/^req_/) });
  });

  it('a full-scope bearer key may call provider tools', async () => {
    const { client } = await connect({ key: f.provider.key });
    const r = await client.callTool({ name: 'provider_list_apis', arguments: {} });
    expect(r.isError).toBeFalsy();
    expect(JSON.stringify(structured(r))).toContain(f.listing.apiId);
  });

  it('a bare registered key calling a provider or billing tool gets HTTP 403 insufficient_scope with a challenge', async () => {
    const { key } = await seedKey(f.db, f.provider.orgId, { scopes: [...REGISTER_SCOPES] });
    for (const [name, scope] of [
      ['provider_list_apis', 'provider:write'],
      ['create_checkout', 'billing:write'],
    ] as const) {
      const r = await rawPost(
        f.endpoint,
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: {} } },
        { authorization: `Bearer ${key}` },
      );
      expect(r.status).toBe(403);
      expect(r.json).toMatchObject({ code: 'insufficient_scope', required_scope: scope });
      expect(r.headers.get('www-authenticate')).toMatch(
        new RegExp(`^Bearer error="insufficient_scope", scope="[^"]*${scope}[^"]*", resource_metadata="http://`),
      );
    }
  });

  it('an unknown bearer gets 401 with WWW-Authenticate naming the resource metadata', async () => {
    const r = await rawPost(f.endpoint, initializeBody(), {
      authorization: 'Bearer svc_live_AAAAAAAAAAAAAAAAAAAAAAAA',
    });
    expect(r.status).toBe(401);
    expect(r.json.code).toBe('unauthorized');
    const header = r.headers.get('www-authenticate')!;
    const url = /resource_metadata="([^"]+)"/.exec(header)![1]!;
    const meta = await (await fetch(url)).json();
    expect(meta).toMatchObject({ resource: f.endpoint, authorization_servers: [f.h.control.url] });
  });

  it('a paid call charges once; the same JSON-RPC request retried in the session is replayed, not charged', async () => {
    const init = await rawPost(f.endpoint, initializeBody());
    const sid = init.headers.get('mcp-session-id')!;
    const reg = await rawPost(
      f.endpoint,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'svc_register', arguments: {} } },
      { 'mcp-session-id': sid },
    );
    const orgId = reg.json.result.structuredContent.org_id as string;
    await grantCredits(f.db, orgId, 10);
    const paid = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'call_api', arguments: { slug: f.listing.slug, endpoint: '/items/{id}', input: { id: '42' } } },
    };
    const first = await rawPost(f.endpoint, paid, { 'mcp-session-id': sid });
    expect(first.json.result.structuredContent).toMatchObject({ status: 200, charged_cents: 3, balance_cents: 7 });
    const retry = await rawPost(f.endpoint, paid, { 'mcp-session-id': sid });
    expect(retry.json.result.structuredContent).toMatchObject({
      status: 200,
      charged_cents: 0,
      idempotent_replay: true,
      balance_cents: 7, // the balance now, as a fresh call reports it (issue 24: it was null)
    });
    const bal = await rawPost(
      f.endpoint,
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_balance', arguments: {} } },
      { 'mcp-session-id': sid },
    );
    expect(bal.json.result.structuredContent.credit_cents).toBe(7);
  });

  it('a bearer key with credit: call_api through the SDK client charges the price once, get_balance reads it', async () => {
    const org = await seedOrg(f.db);
    await grantCredits(f.db, org.orgId, 20);
    const { client } = await connect({ key: org.key });
    const hits = f.upstream.requests.length;
    const r = await client.callTool({
      name: 'call_api',
      arguments: { slug: f.listing.slug, endpoint: '/items/{id}', input: { id: '7' } },
    });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    const paid = structured(r);
    expect(paid).toMatchObject({ status: 200, price_cents: 3, charged_cents: 3, balance_cents: 17 });
    expect(f.upstream.requests.length).toBe(hits + 1);
    const usage = await f.db.db
      .selectFrom('usage_events')
      .select(['org_id', 'key_id', 'charged_cents'])
      .where('id', '=', paid.request_id)
      .executeTakeFirstOrThrow();
    expect(usage).toEqual({ org_id: org.orgId, key_id: org.keyId, charged_cents: 3 });
    const bal = structured(await client.callTool({ name: 'get_balance', arguments: {} }));
    expect(bal).toMatchObject({ org_id: org.orgId, credit_cents: 17 });
    await client.close();
  });

  it("402 is a tool error naming the gateway's next step (an unverified key verifies first); a price above max_price_cents is refused and not charged", async () => {
    const { client } = await connect();
    await client.callTool({ name: 'svc_register', arguments: {} });
    const broke = await client.callTool({
      name: 'call_api',
      arguments: { slug: f.listing.slug, endpoint: '/items/1' },
    });
    expect(broke.isError).toBe(true);
    // Not create_checkout, which an unverified key cannot use (issue 24): the gateway says verify_email first.
    expect(structured(broke).error).toMatchObject({ code: 'insufficient_credits', next: { tool: 'verify_email' } });
    const capped = await client.callTool({
      name: 'call_api',
      arguments: { slug: f.listing.slug, endpoint: '/items/1', max_price_cents: 2 },
    });
    expect(structured(capped).error).toMatchObject({ code: 'price_above_max' });
  });

  it('refuses a foreign Host or Origin (DNS rebinding) with 403 problem+json', async () => {
    const evil = await rawPost(f.endpoint, initializeBody(), { origin: 'http://evil.example.com' });
    expect(evil.status).toBe(403);
    expect(evil.json.code).toBe('forbidden');
  });

  it("a registered key's 403 carries a one-time svc_key: step-up handle so OAuth elevates the same key", async () => {
    const res = await fetch(`${f.h.control.url}/v1/register`, { method: 'POST' });
    const { api_key } = (await res.json()) as { api_key: string };
    const r = await rawPost(
      f.endpoint,
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'billing_setup', arguments: {} } },
      { authorization: `Bearer ${api_key}` },
    );
    expect(r.status).toBe(403);
    expect(r.headers.get('www-authenticate')).toMatch(/scope="billing:write provider:write svc_key:[0-9A-Za-z]{32}"/);
  });
});
