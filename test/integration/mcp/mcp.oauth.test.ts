/**
 * OAuth 2.1 into the MCP server, headless: Dynamic Client Registration and a Client ID Metadata Document, each with
 * metadata discovery from the MCP host, the email code from the SMTP sink, PKCE exchange, a tool call with the access
 * token (the same Principal as the key the approval minted), refresh, and revocation ending access.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.js';
import { runOAuthFlow, serveClientDocument } from '../../helpers/oauth.js';
import { initializeBody, rawPost, startMcpFixture, type McpFixture } from './fixture.js';

const PORT = 41000 + Math.floor(Math.random() * 4000);
const MCP_URL = `http://127.0.0.1:${PORT}`;
let f: McpFixture;
let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await startSmtpSink();
  f = await startMcpFixture({ SVC_MCP_PORT: String(PORT) }, { SVC_SMTP_URL: smtp.url, SVC_MCP_URL: MCP_URL });
}, 60_000);
afterAll(async () => {
  await f.stop();
  await smtp.close();
});

const email = (tag: string) => `${tag}-${Date.now()}@example.test`;
const structured = (r: unknown) => (r as { structuredContent: Record<string, any> }).structuredContent;

async function clientWith(token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(f.endpoint), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function revoke(metadata: Record<string, any>, clientId: string, token: string): Promise<number> {
  const res = await fetch(metadata.revocation_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, client_id: clientId }).toString(),
  });
  return res.status;
}

describe('OAuth 2.1 access to the MCP server', () => {
  it('the MCP host names the authorization server, which a 401 points to', async () => {
    const r = await rawPost(f.endpoint, initializeBody(), { authorization: 'Bearer svc_at_nope' });
    expect(r.status).toBe(401);
    const meta = await (await fetch(`${MCP_URL}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(meta).toMatchObject({ resource: `${MCP_URL}/mcp`, authorization_servers: [f.h.control.url] });
  });

  for (const kind of ['DCR', 'CIMD'] as const) {
    it(`${kind}: authorize with the email code, call tools with the token, refresh, revoke`, async () => {
      let clientId: string | undefined;
      let doc: { close(): Promise<void> } | undefined;
      if (kind === 'CIMD') {
        const served = await serveClientDocument((id) => ({
          client_id: id,
          client_name: 'CIMD agent',
          redirect_uris: ['http://127.0.0.1:33418/callback'],
          token_endpoint_auth_method: 'none',
        }));
        clientId = served.clientId;
        doc = served;
      }
      const flow = await runOAuthFlow({
        controlUrl: f.h.control.url,
        smtp,
        email: email(kind.toLowerCase()),
        resource: `${MCP_URL}/mcp`,
        ...(clientId ? { clientId } : {}),
      });
      const client = await clientWith(flow.tokens.access_token);
      const bal = structured(await client.callTool({ name: 'get_balance', arguments: {} }));
      expect(bal.org_id).toMatch(/^org_/);
      // Approval mints a full-scope key: provider tools pass the 403 gate.
      const mine = await client.callTool({ name: 'provider_list_apis', arguments: {} });
      expect(mine.isError).toBeFalsy();
      const call = structured(
        await client.callTool({ name: 'call_api', arguments: { slug: f.listing.slug, endpoint: '/ping' } }),
      );
      expect(call).toMatchObject({ status: 200, charged_cents: 0 });

      const refreshed = await fetch(flow.metadata.token_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: flow.tokens.refresh_token,
          client_id: flow.clientId,
          resource: `${MCP_URL}/mcp`,
        }).toString(),
      });
      expect(refreshed.status).toBe(200);
      const tokens = (await refreshed.json()) as { access_token: string; refresh_token: string };
      const again = await clientWith(tokens.access_token);
      expect(structured(await again.callTool({ name: 'get_balance', arguments: {} })).org_id).toBe(bal.org_id);

      expect(await revoke(flow.metadata, flow.clientId, tokens.refresh_token)).toBe(200);
      const after = await rawPost(f.endpoint, initializeBody(), { authorization: `Bearer ${tokens.access_token}` });
      expect(after.status).toBe(401);
      expect(after.headers.get('www-authenticate')).toContain('resource_metadata=');
      await doc?.close();
    }, 60_000);
  }
});
