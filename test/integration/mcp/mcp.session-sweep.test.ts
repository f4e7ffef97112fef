/**
 * Session lifetimes with an injected clock: the MCP app in-process over a real SQLite file. A session bound to a key
 * has the spec's 30 days (§8): idle past them it is refused (404, so a 2025-11-25 client sends initialize again) and
 * removed by the sweep; one in use within the window is extended by its use and kept. A session with no key bound
 * (what a health check or a keyless start leaves, since no client sends DELETE) lives one day after its last use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, type Clock } from '../../../core/clock.js';
import { sha256Hex } from '../../../core/crypto.js';
import { seedOrg } from '../../helpers/db.js';
import { initializeBody } from './fixture.js';
import { startInProcessMcp, type InProcessMcp } from './in-process.js';

let now = Date.UTC(2026, 0, 1);
const clock: Clock = { now: () => now };
let mcp: InProcessMcp;
let key: { id: string; plaintext: string };
beforeAll(async () => {
  mcp = await startInProcessMcp({ clock });
  const org = await seedOrg(mcp.ctx);
  key = { id: org.keyId, plaintext: org.key };
});
afterAll(() => mcp.stop());

/** A session opened with the key in Authorization: bound to it. */
async function initialize(): Promise<string> {
  const r = await mcp.post(initializeBody(), { authorization: `Bearer ${key.plaintext}` });
  expect(r.status).toBe(200);
  return r.headers.get('mcp-session-id')!;
}

/** A keyless session (development): nothing bound. */
async function initializeKeyless(): Promise<string> {
  const r = await mcp.post(initializeBody());
  expect(r.status).toBe(200);
  return r.headers.get('mcp-session-id')!;
}

const listTools = (sessionId: string, auth = true) =>
  mcp.post(
    { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    {
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
      ...(auth ? { authorization: `Bearer ${key.plaintext}` } : {}),
    },
  );

const stored = async (sessionId: string) =>
  (await mcp.ctx.db
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

    expect(await mcp.sessions.sweep()).toBe(1);
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
    await mcp.sessions.sweep();
    expect(await stored(s)).toBe(true);
    expect((await listTools(s)).status).toBe(200); // extended: 30 more days from here
    now += 30 * DAY_MS;
    expect(await mcp.sessions.sweep()).toBeGreaterThanOrEqual(1);
    expect(await stored(s)).toBe(false);
    expect((await listTools(s)).status).toBe(404);
  });

  it('a session with no key bound expires a day after its last use; binding a key gives it the 30 days', async () => {
    const idle = await initializeKeyless();
    const used = await initializeKeyless();
    const bound = await initializeKeyless();
    await mcp.sessions.bindKey(bound, key);

    now += DAY_MS / 2;
    expect((await listTools(used, false)).status).toBe(200); // use extends it: a day from now

    now += DAY_MS / 2; // idle: a day since initialize; used: half a day since its use
    expect((await listTools(idle, false)).status).toBe(404);
    expect(await mcp.sessions.sweep()).toBe(1);
    expect(await stored(idle)).toBe(false);
    expect(await stored(used)).toBe(true);

    now += 10 * DAY_MS; // used: idle past its day; bound: still within its 30 days
    expect((await listTools(used, false)).status).toBe(404);
    await mcp.sessions.sweep();
    expect(await stored(used)).toBe(false);
    expect(await stored(bound)).toBe(true);
    expect((await listTools(bound, false)).status).toBe(200);
  });
});
