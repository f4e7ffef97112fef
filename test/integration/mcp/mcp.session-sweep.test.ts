/**
 * The 30-day session TTL (spec §8) with an injected clock: the MCP app in-process over a real SQLite file. A session
 * idle past 30 days is refused (404, so a 2025-11-25 client sends initialize again) and removed by the sweep; one in
 * use within the window is extended by its use and kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../core/config.js';
import { DAY_MS, type Clock } from '../../../core/clock.js';
import { sha256Hex } from '../../../core/crypto.js';
import { createAppContext, type AppContext } from '../../../control/context.js';
// Before mcp/app.js, as in mcp/main.ts: the control routes it loads extend zod with .openapi() before the schema
// modules the tools import are evaluated.
import { createControlCalls } from '../../../mcp/control-calls.js';
import { createMcpApp } from '../../../mcp/app.js';
import { createGatewayCalls, type GatewayCalls } from '../../../mcp/gateway-calls.js';
import { McpSessionStore } from '../../../mcp/sessions.js';
import { baseEnv, tempDataDir } from '../../helpers/processes.js';
import { initializeBody } from './fixture.js';

let now = Date.UTC(2026, 0, 1);
const clock: Clock = { now: () => now };
const data = tempDataDir();
let ctx: AppContext;
let gateway: GatewayCalls;
let sessions: McpSessionStore;
let app: ReturnType<typeof createMcpApp>;

beforeAll(async () => {
  ctx = await createAppContext(loadConfig(baseEnv(data.dir)), { process: 'test', clock });
  sessions = new McpSessionStore(ctx);
  // No tool here reaches the gateway; the client exists because the app needs one.
  gateway = createGatewayCalls('http://127.0.0.1:9');
  app = createMcpApp({ ctx, sessions, control: createControlCalls(ctx), gateway });
});
afterAll(async () => {
  await gateway.close();
  await ctx.close();
  data.cleanup();
});

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  host: '127.0.0.1',
};
const SOCKET = { incoming: { socket: { remoteAddress: '127.0.0.1' } } };

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await app.request(
    'http://127.0.0.1/mcp',
    { method: 'POST', headers: { ...HEADERS, ...headers }, body: JSON.stringify(body) },
    SOCKET,
  );
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, any> };
}

async function initialize(): Promise<string> {
  const r = await post(initializeBody());
  expect(r.status).toBe(200);
  return r.headers.get('mcp-session-id')!;
}

const listTools = (sessionId: string) =>
  post(
    { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
  );

const stored = async (sessionId: string) =>
  (await ctx.db
    .selectFrom('mcp_sessions')
    .select('expires_at')
    .where('id_hash', '=', sha256Hex(sessionId))
    .executeTakeFirst()) !== undefined;

describe('MCP session TTL sweep (injected clock)', () => {
  it('refuses and sweeps a session idle past 30 days, and keeps one used within them', async () => {
    const idle = await initialize();
    const used = await initialize();

    now += 20 * DAY_MS;
    expect((await listTools(used)).status).toBe(200); // use moves its expiry to 30 days from now

    now += 11 * DAY_MS; // idle: 31 days since its last use; used: 11 days
    const refused = await listTools(idle);
    expect(refused.status).toBe(404);
    expect(refused.json).toMatchObject({ code: 'not_found', status: 404 });
    expect(refused.json.request_id).toMatch(/^req_/);
    expect(await stored(idle)).toBe(true); // refused at once, removed by the sweep

    expect(await sessions.sweep()).toBe(1);
    expect(await stored(idle)).toBe(false);
    expect(await stored(used)).toBe(true);
    expect((await listTools(idle)).status).toBe(404);
    const kept = await listTools(used);
    expect(kept.status).toBe(200);
    expect(kept.json.result.tools.length).toBeGreaterThan(0);
  });

  it('sweeps a used session once 30 days pass after its last use', async () => {
    const s = await initialize();
    now += 30 * DAY_MS - 1;
    await sessions.sweep();
    expect(await stored(s)).toBe(true);
    expect((await listTools(s)).status).toBe(200); // extended: 30 more days from here
    now += 30 * DAY_MS;
    expect(await sessions.sweep()).toBeGreaterThanOrEqual(1);
    expect(await stored(s)).toBe(false);
    expect((await listTools(s)).status).toBe(404);
  });
});
