/** Refusals an agent must be able to act on: 428 terms as a tool error naming the terms page, and 401 in production. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/http.js';
import { startProcess } from '../../helpers/processes.js';
import { initializeBody, rawPost, startMcpFixture, type McpFixture } from './fixture.js';

let f: McpFixture;
beforeAll(async () => {
  f = await startMcpFixture();
}, 60_000);
afterAll(() => f.stop());

const toolCall = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('MCP refusals', () => {
  it('call_api to an API with unaccepted required terms is a 428 tool error pointing a person at the terms', async () => {
    const created = await call(f.h.control.url, 'POST', '/v1/provider/documents', {
      token: f.provider.key,
      body: {
        kind: 'terms',
        source: 'hosted',
        version: '1.0.0',
        markdown: '# Terms\nBe nice.',
        api_id: f.listing.apiId,
        acceptance_mode: 'required',
      },
    });
    expect(created.status).toBe(201);
    const act = await call(f.h.control.url, 'POST', `/v1/provider/documents/${created.body.document_id}/activate`, {
      token: f.provider.key,
    });
    expect(act.status).toBe(200);

    const reg = await fetch(`${f.h.control.url}/v1/register`, { method: 'POST' });
    const { api_key } = (await reg.json()) as { api_key: string };
    const auth = { authorization: `Bearer ${api_key}` };
    let error: Record<string, any> | undefined;
    for (let i = 0; i < 30; i++) {
      // the gateway applies the activation from the change feed within its poll interval
      const r = await rawPost(
        f.endpoint,
        toolCall(i + 1, 'call_api', { slug: f.listing.slug, endpoint: '/ping' }),
        auth,
      );
      error = r.json.result.structuredContent.error;
      if (error) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    // The page a person opens in a browser to accept (issue 24), not the REST route, which answers a browser 401.
    expect(error).toMatchObject({
      code: 'terms_not_accepted',
      next: { url: `${f.h.control.url}/apis/${f.listing.slug}` },
    });
    const page = await fetch(error!.next.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('in production a request without a credential gets 401 with the resource-metadata challenge', async () => {
    const prod = await startProcess('mcp-prod', 'mcp/main.js', {
      ...f.mcpEnv,
      SVC_ENV: 'production',
      SVC_SMTP_URL: 'smtp://127.0.0.1:9',
    });
    try {
      const r = await rawPost(`${prod.url}/mcp`, initializeBody());
      expect(r.status).toBe(401);
      expect(r.json).toMatchObject({ code: 'unauthorized', request_id: expect.stringMatching(/^req_/) });
      expect(r.headers.get('www-authenticate')).toMatch(
        /^Bearer resource_metadata="http:\/\/.+\/\.well-known\/oauth-protected-resource\/mcp"$/,
      );
      const ok = await rawPost(`${prod.url}/mcp`, initializeBody(), { authorization: `Bearer ${f.provider.key}` });
      expect(ok.status).toBe(200);
    } finally {
      await prod.stop();
    }
  });
});
