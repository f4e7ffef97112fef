/**
 * The 2026-07-28 era with the v2 SDK client (`@modelcontextprotocol/client`, `versionNegotiation: { pin }`):
 * server/discover, per-request `_meta`, no session; svc_register hands the key back, which the client then sends as
 * its bearer on every request. The same /mcp endpoint serves the 2025 era (mcp.sessions.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { smallOpenApi } from '../../helpers/catalog.js';
import { startMcpFixture, type McpFixture } from './fixture.js';
import { SPEC_TOOLS } from './spec-tools.js';

let f: McpFixture;
beforeAll(async () => {
  f = await startMcpFixture();
}, 60_000);
afterAll(() => f.stop());

async function connect(key?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(f.endpoint), {
    ...(key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {}),
  });
  const client = new Client(
    { name: 'v2-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(transport);
  return client;
}

const structured = (r: unknown) => (r as { structuredContent: Record<string, any> }).structuredContent;

describe('MCP 2026-07-28 stateless (v2 SDK client)', () => {
  it('negotiates 2026-07-28 and lists the spec tools', async () => {
    const client = await connect();
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(Object.keys(SPEC_TOOLS));
    await client.close();
  });

  it('registers without a session, then calls a free API sending the returned key as bearer', async () => {
    const anon = await connect();
    const reg = structured(await anon.callTool({ name: 'svc_register', arguments: {} }));
    expect(reg).toMatchObject({ bound_to_session: false, credit_cents: 0 });
    expect(reg.api_key).toMatch(/^svc_live_/);
    await anon.close();
    expect(await f.db.db.selectFrom('mcp_sessions').select('id_hash').execute()).toHaveLength(0);

    const client = await connect(reg.api_key);
    const call = await client.callTool({
      name: 'run_probe',
      arguments: { slug: f.listing.slug, endpoint: '/items/{id}', input: { id: 'x' } },
    });
    expect(call.isError).toBe(true); // 3 cents, 0 credits
    expect(structured(call).error).toMatchObject({ code: 'insufficient_credits' });
    const free = await client.callTool({ name: 'call_api', arguments: { slug: f.listing.slug, endpoint: '/ping' } });
    expect(structured(free)).toMatchObject({ status: 200, charged_cents: 0 });
    const bal = structured(await client.callTool({ name: 'get_balance', arguments: {} }));
    expect(bal.org_id).toBe(reg.org_id);
    await client.close();
  });

  it('a provider key reads its own listings through the provider tools', async () => {
    const client = await connect(f.provider.key);
    const raw = await client.callTool({ name: 'provider_get_api', arguments: { api_id: f.listing.apiId } });
    const r = structured(raw);
    expect(JSON.stringify(r)).toContain(f.listing.slug);
    await client.close();
  });

  it('every tool answers data that matches its outputSchema (no output validation error)', async () => {
    const client = await connect(f.provider.key);
    const me = structured(await client.callTool({ name: 'get_my_profile', arguments: {} }));
    const calls: [string, Record<string, unknown>][] = [
      ['discover_tools', { query: 'test' }],
      ['search_apis', { query: 'test' }],
      ['get_categories', {}],
      ['get_market_overview', {}],
      ['get_leaderboard', { board: 'trending' }],
      ['request_api', { query: 'a geocoding API' }],
      ['get_api_details', { slug: f.listing.slug }],
      ['get_schema', { slug: f.listing.slug }],
      ['get_balance', {}],
      ['create_checkout', { pack: 'starter' }],
      ['billing_portal', {}],
      ['billing_setup', {}],
      ['get_usage', {}],
      ['set_budget', { daily_cap_cents: 500 }],
      ['provision_access', { slug: f.listing.slug }],
      ['provider_list_apis', {}],
      ['provider_get_api', { api_id: f.listing.apiId }],
      ['provider_update_api', { api_id: f.listing.apiId, summary: 'Updated over MCP' }],
      ['provider_analytics', {}],
      ['provider_connect_onboard', {}],
      ['list_providers', {}],
      ['get_provider_profile', { slug: me.slug }],
      ['update_my_profile', { bio: 'Set over MCP' }],
    ];
    for (const [name, args] of calls) {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError ? JSON.stringify(r.content) : 'ok', name).toBe('ok');
      expect(structured(r), name).toBeTypeOf('object');
    }
    const checkout = structured(await client.callTool({ name: 'create_checkout', arguments: { pack: 'starter' } }));
    expect(checkout).toMatchObject({ human_action_required: true, checkout_url: expect.stringMatching(/^http/) });
    await client.close();
  });

  it('the provider write tools answer data that matches their domain output schemas', async () => {
    const client = await connect(f.provider.key);
    const ok = async (name: string, args: Record<string, unknown>) => {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError ? JSON.stringify(r.content) : 'ok', name).toBe('ok');
      return structured(r);
    };
    const created = await ok('provider_create_api', { body: smallOpenApi('MCP Lifecycle API') });
    const api_id = created.api_id as string;
    const ep = (path: string) =>
      (created.endpoints as { endpoint_id: string; method: string; path: string }[]).find((e) => e.path === path)!
        .endpoint_id;
    await ok('provider_update_api', { api_id, base_url: f.upstream.url, health_path: '/ping' });
    expect(await ok('provider_set_credentials', { api_id, secret: 'upstream-secret' })).toMatchObject({
      credentials: { set: true },
    });
    await ok('provider_set_pricing', { api_id, endpoints: [{ endpoint_id: ep('/items/{id}'), price_cents: 2 }] });
    expect(await ok('provider_verify', { api_id })).toHaveProperty('checks');
    expect(await ok('provider_publish', { api_id, accept_terms: true })).toMatchObject({ status: 'live' });
    const raised = await ok('provider_set_pricing', {
      api_id,
      endpoints: [{ endpoint_id: ep('/items/{id}'), price_cents: 9 }],
    });
    expect(raised.results[0].outcome).toBe('scheduled');
    expect(await ok('provider_cancel_pending_pricing', { api_id, endpoint_id: ep('/items/{id}') })).toMatchObject({
      status: 'cancelled',
    });
    expect(await ok('provider_unpublish', { api_id })).toMatchObject({ status: 'draft' });
    await client.close();
  });
});
