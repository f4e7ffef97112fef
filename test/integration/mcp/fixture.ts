/**
 * The real processes an MCP test talks to: control plane, gateway and MCP server over one temp data dir, a stub
 * upstream behind a live listing (GET /ping free, GET /items/{id} 3 cents), and the test's own DB connection.
 */
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { baseEnv, startProcess, type RunningProcess } from '../../helpers/processes.js';
import { openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { createLiveListing, startStubUpstream, type LiveListing, type StubUpstream } from '../../helpers/catalog.js';
import type { DbHandles } from '../../../core/db/database.js';

export interface McpFixture {
  h: ControlHarness;
  gateway: RunningGateway;
  mcp: RunningProcess;
  /** `${mcp.url}/mcp` */
  endpoint: string;
  upstream: StubUpstream;
  db: DbHandles;
  provider: SeededOrg;
  listing: LiveListing;
  mcpEnv: Record<string, string>;
  /** Stops and starts the MCP process again (same data dir, same port); `endpoint` stays valid. */
  restartMcp(): Promise<void>;
  stop(): Promise<void>;
}

export async function startMcpFixture(
  extraMcpEnv: Record<string, string> = {},
  controlEnv: Record<string, string> = {},
): Promise<McpFixture> {
  const h = await startControl(controlEnv);
  const gateway = await startGateway(h.dataDir);
  const upstream = await startStubUpstream();
  const db = openTestDb(h.dataDir);
  const provider = await seedOrg(db);
  const listing = await createLiveListing(h.control.url, provider.key, {
    baseUrl: upstream.url,
    slug: 'mcp-test-api',
    prices: { 'GET /items/{id}': 3 },
  });
  const mcpEnv = baseEnv(h.dataDir, {
    SVC_PUBLIC_URL: h.control.url,
    SVC_GATEWAY_URL: gateway.url,
    ...(controlEnv.SVC_MCP_URL ? { SVC_MCP_URL: controlEnv.SVC_MCP_URL } : {}),
    ...extraMcpEnv,
  });
  let mcp = await startProcess('mcp', 'mcp/main.js', mcpEnv);
  const f: McpFixture = {
    h,
    gateway,
    mcp,
    endpoint: `${mcp.url}/mcp`,
    upstream,
    db,
    provider,
    listing,
    mcpEnv,
    async restartMcp() {
      await mcp.stop();
      mcp = await startProcess('mcp', 'mcp/main.js', { ...mcpEnv, SVC_MCP_PORT: String(f.mcp.port) });
      f.mcp = mcp;
    },
    async stop() {
      await mcp.stop();
      await gateway.stop();
      await db.close();
      await upstream.close();
      await h.stop();
    },
  };
  return f;
}

/** What every MCP POST sends: a JSON body, and JSON or SSE accepted (the 2025 transport requires both). */
export const JSON_RPC_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A raw JSON-RPC POST, for what the SDK clients hide (status codes, headers, repeated request ids). */
export async function rawPost(
  endpoint: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { ...JSON_RPC_HEADERS, 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null };
}

export const initializeBody = (id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-test', version: '1.0.0' } },
});
