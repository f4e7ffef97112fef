/**
 * The tools/call fast path (mcp/fast-tool-call.ts) speaks the same protocol as the SDK: two MCP processes on one
 * data dir, one with the fast path (labelled, SVC_MCP_FAST_TOOL_CALLS=mark) and one without (=off), get the same
 * matrix of requests, both eras, and must answer the same status, headers and bytes (modulo request ids). The label
 * proves which requests the fast path took, so the comparison cannot pass by the fast path never running.
 */
import { connect, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcess, type RunningProcess } from '../../helpers/processes.js';
import { JSON_RPC_HEADERS, initializeBody, startMcpFixture, type McpFixture } from './fixture.js';
import { dechunk } from '../../helpers/http.js';

const MODERN = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};
/** Headers that differ by connection or time, or only in spelling (node:http vs Hono write Content-Length). */
const UNCOMPARED_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
const FAST_LABEL = 'x-svc-mcp-fast-path';

let f: McpFixture;
let sdkOnly: RunningProcess;
let fastEndpoint: string;
let sdkEndpoint: string;
let key: string;
let session: string;

beforeAll(async () => {
  f = await startMcpFixture({ SVC_MCP_FAST_TOOL_CALLS: 'mark' });
  sdkOnly = await startProcess('mcp-sdk', 'mcp/main.js', { ...f.mcpEnv, SVC_MCP_FAST_TOOL_CALLS: 'off' });
  fastEndpoint = f.endpoint;
  sdkEndpoint = `${sdkOnly.url}/mcp`;
  key = ((await (await fetch(`${f.h.control.url}/v1/register`, { method: 'POST' })).json()) as { api_key: string })
    .api_key;
  // initialize goes through the fast server's fallback (the body it read is handed on to the SDK path)
  const init = await fetch(fastEndpoint, {
    method: 'POST',
    headers: { ...JSON_RPC_HEADERS, authorization: `Bearer ${key}` },
    body: JSON.stringify(initializeBody()),
  });
  expect(init.status).toBe(200);
  expect(init.headers.get('x-svc-mcp-fast-path')).toBeNull();
  session = init.headers.get('mcp-session-id')!;
}, 90_000);
afterAll(async () => {
  await sdkOnly?.stop();
  await f?.stop();
});

type Era = 'session' | '2025 bearer' | 'modern';
interface Case {
  name: string;
  era: Era;
  tool: string;
  args?: Record<string, unknown>;
  /** The bearer to send (default: the registered key; null: none). */
  bearer?: string | null;
  sessionId?: string;
  headers?: Record<string, string>;
  /** A JSON-RPC id to send instead of the generated one. */
  id?: number;
  /** Whether the fast path must take it (else it must hand it to the SDK path). */
  fast: boolean;
}

const free = () => ({ slug: f.listing.slug, endpoint: '/ping' });
const cases = (): Case[] => {
  const perEra = (era: Era): Case[] => [
    { name: 'call_api, free endpoint', era, tool: 'call_api', args: free(), fast: true },
    {
      name: 'call_api with input and method',
      era,
      tool: 'call_api',
      args: { ...free(), method: 'GET', input: { q: 'x y' } },
      fast: true,
    },
    { name: 'get_balance', era, tool: 'get_balance', args: {}, fast: true },
    { name: 'get_balance without arguments', era, tool: 'get_balance', fast: true },
    { name: 'invalid arguments', era, tool: 'get_schema', args: { slug: 5 }, fast: true },
    {
      name: 'invalid arguments, several issues',
      era,
      tool: 'call_api',
      args: { slug: '', method: 'TRACE' },
      fast: true,
    },
    { name: 'unknown tool', era, tool: 'no_such_tool', args: {}, fast: false },
    {
      name: 'not_found from the gateway',
      era,
      tool: 'call_api',
      args: { slug: 'no-such-api', endpoint: '/x' },
      fast: true,
    },
    {
      name: '402 price above max',
      era,
      tool: 'call_api',
      args: { slug: f.listing.slug, endpoint: '/items/1', max_price_cents: 0 },
      fast: true,
    },
    { name: 'insufficient scope (403 step-up)', era, tool: 'create_checkout', args: { pack: 'starter' }, fast: true },
    {
      name: 'provider key, billing tool allowed',
      era,
      tool: 'get_usage',
      args: {},
      bearer: f.provider.key,
      fast: true,
    },
    {
      name: 'bad bearer',
      era,
      tool: 'get_balance',
      args: {},
      bearer: 'svc_live_not_a_real_key_000000000000',
      fast: true,
    },
    {
      name: 'malformed Authorization',
      era,
      tool: 'get_balance',
      args: {},
      headers: { authorization: 'Basic abc' },
      fast: true,
    },
    { name: 'anonymous', era, tool: 'get_balance', args: {}, bearer: null, fast: true },
    { name: 'public tool, anonymous', era, tool: 'discover_tools', args: { query: 'test' }, bearer: null, fast: true },
    { name: 'foreign Host', era, tool: 'get_balance', args: {}, headers: { host: 'evil.example' }, fast: true },
    {
      name: 'foreign Origin',
      era,
      tool: 'get_balance',
      args: {},
      headers: { origin: 'http://evil.example' },
      fast: true,
    },
    {
      name: 'local Origin',
      era,
      tool: 'get_balance',
      args: {},
      headers: { origin: 'http://localhost:3000' },
      fast: true,
    },
    { name: 'JSON-RPC id as a float', era, tool: 'get_balance', args: {}, id: 1.5, fast: false },
  ];
  return [
    ...perEra('session').map((c) => ({ ...c, bearer: c.bearer === undefined ? null : c.bearer, sessionId: session })),
    {
      name: 'unknown session',
      era: 'session',
      tool: 'get_balance',
      args: {},
      sessionId: 'no-such-session',
      fast: true,
    },
    ...perEra('2025 bearer'),
    {
      name: 'unsupported protocol-version header',
      era: '2025 bearer',
      tool: 'get_balance',
      args: {},
      headers: { 'mcp-protocol-version': '1999-01-01' },
      fast: false,
    },
    {
      name: 'no text/event-stream in Accept',
      era: '2025 bearer',
      tool: 'get_balance',
      args: {},
      headers: { accept: 'application/json' },
      fast: false,
    },
    ...perEra('modern'),
    {
      name: 'Mcp-Name mismatch',
      era: 'modern',
      tool: 'get_balance',
      args: {},
      headers: { 'mcp-name': 'get_usage' },
      fast: false,
    },
    {
      name: 'Mcp-Method missing',
      era: 'modern',
      tool: 'get_balance',
      args: {},
      headers: { 'mcp-method': '' },
      fast: false,
    },
  ];
};

interface Answer {
  status: number;
  headers: Record<string, string | null>;
  body: string;
  fast: boolean;
}

async function send(endpoint: string, c: Case, id: string | number): Promise<Answer> {
  const params: Record<string, unknown> = { name: c.tool };
  if (c.args !== undefined) params.arguments = c.args;
  if (c.era === 'modern') params._meta = META;
  const headers: Record<string, string> = { ...JSON_RPC_HEADERS };
  if (c.era === 'modern') {
    Object.assign(headers, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': c.tool });
  } else headers['mcp-protocol-version'] = '2025-11-25';
  const bearer = c.bearer === undefined ? key : c.bearer;
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (c.sessionId) headers['mcp-session-id'] = c.sessionId;
  for (const [k, v] of Object.entries(c.headers ?? {})) {
    if (v === '') delete headers[k];
    else headers[k] = v;
  }
  const res = await fetch(endpoint, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: c.id ?? id, method: 'tools/call', params }),
  });
  return answerOf(res.status, res.headers, await res.text(), new URL(endpoint).origin);
}

/**
 * Every header but the uncompared ones (so a header either path adds alone fails the comparison), with what differs
 * per server or per call replaced: each server names its own origin in a challenge (and its host in a refusal), each
 * request its own id, and each step-up mints its own one-time key handle.
 */
function answerOf(status: number, headers: Iterable<[string, string]>, body: string, origin: string): Answer {
  const picked: Record<string, string | null> = {};
  let fast = false;
  for (const [name, value] of headers) {
    const h = name.toLowerCase();
    if (h === FAST_LABEL) fast = true;
    if (h === FAST_LABEL || UNCOMPARED_HEADERS.has(h)) continue;
    picked[h] =
      h === 'x-svc-request-id' ? 'present' : value.replaceAll(origin, 'ORIGIN').replace(/svc_key:[\w-]+/, 'svc_key:X');
  }
  return { status, headers: picked, body: body.replaceAll(new URL(origin).host, '{host}'), fast };
}

interface RawCase {
  name: string;
  /** Header lines; `{host}` becomes the server's own `127.0.0.1:port`. */
  headers: string[];
  body: string | Buffer;
  /** Whether the fast path must take it (else it must hand it to the SDK path). */
  fast: boolean;
}

const rawCall = (name: string, args = '{}', opts: { id?: string; params?: string; top?: string } = {}) =>
  `{"jsonrpc":"2.0","id":${opts.id ?? '"raw"'},"method":"tools/call",${opts.top ?? ''}"params":{"name":"${name}","arguments":${args}${opts.params ?? ''}}}`;
const rawModernCall = (name: string) => rawCall(name, '{}', { params: `,"_meta":${JSON.stringify(META)}` });

const rawCases = (): RawCase[] => {
  const legacy = (...extra: string[]) => [
    'host: {host}',
    'content-type: application/json',
    'accept: application/json, text/event-stream',
    'mcp-protocol-version: 2025-11-25',
    `authorization: Bearer ${key}`,
    ...extra,
  ];
  const modern = (tool: string, ...extra: string[]) => [
    'host: {host}',
    'content-type: application/json',
    'accept: application/json, text/event-stream',
    `mcp-protocol-version: ${MODERN}`,
    'mcp-method: tools/call',
    `mcp-name: ${tool}`,
    `authorization: Bearer ${key}`,
    ...extra,
  ];
  /** The legacy lines with the one named header replaced. */
  const legacyWith = (name: string, line: string) => legacy().map((l) => (l.startsWith(`${name}:`) ? line : l));
  const bad = 'authorization: Bearer svc_live_not_a_real_key_000000000000';
  const balance = rawCall('get_balance');
  return [
    { name: 'plain 2025 call', headers: legacy(), body: balance, fast: true },
    { name: 'repeated Authorization, the valid key first', headers: legacy(bad), body: balance, fast: true },
    {
      name: 'repeated Authorization, the valid key last',
      headers: [bad, ...legacy()],
      body: balance,
      fast: true,
    },
    { name: 'repeated Host, a foreign one second', headers: legacy('host: evil.example'), body: balance, fast: true },
    {
      name: 'repeated Content-Type',
      headers: legacy('content-type: text/plain'),
      body: balance,
      fast: false,
    },
    { name: 'Host with a path', headers: legacyWith('host', 'host: localhost/x'), body: balance, fast: false },
    {
      name: 'Host with a port out of range',
      headers: legacyWith('host', 'host: localhost:99999'),
      body: balance,
      fast: false,
    },
    { name: 'Host in capitals', headers: legacyWith('host', 'host: LOCALHOST'), body: balance, fast: false },
    {
      name: 'Content-Type with a charset',
      headers: legacyWith('content-type', 'content-type: application/json; charset=utf-8'),
      body: balance,
      fast: true,
    },
    {
      name: 'Content-Type in capitals',
      headers: legacyWith('content-type', 'content-type: Application/JSON'),
      body: balance,
      fast: true,
    },
    {
      name: 'Content-Type text/plain',
      headers: legacyWith('content-type', 'content-type: text/plain'),
      body: balance,
      fast: false,
    },
    {
      name: '__proto__ among the arguments (a strict input schema)',
      headers: legacyWith('authorization', `authorization: Bearer ${f.provider.key}`),
      body: rawCall('create_checkout', '{"pack":"","__proto__":{}}'),
      fast: false,
    },
    {
      name: '__proto__ among the arguments (a plain input schema)',
      headers: legacy(),
      body: rawCall('get_balance', '{"__proto__":{"x":1}}'),
      fast: false,
    },
    {
      name: 'another caller’s session, with its own bearer',
      headers: legacyWith('authorization', `authorization: Bearer ${f.provider.key}`).concat(
        `mcp-session-id: ${session}`,
      ),
      body: balance,
      fast: true,
    },
    {
      name: 'a UTF-8 byte order mark',
      headers: legacy(),
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(balance)]),
      fast: false,
    },
    {
      name: 'invalid UTF-8 inside a string',
      headers: legacy(),
      body: Buffer.concat([
        Buffer.from(rawCall('get_schema', '{"slug":"a').slice(0, -2)),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}}}'),
      ]),
      fast: true,
    },
    {
      name: 'a repeated JSON key (the last one counts)',
      headers: legacy(),
      body: balance.replace('"method":"tools/call"', '"method":"tools/list","method":"tools/call"'),
      fast: true,
    },
    {
      name: 'a member beyond JSON-RPC’s',
      headers: legacy(),
      body: rawCall('get_balance', '{}', { top: '"extra":1,' }),
      fast: false,
    },
    {
      name: 'params.task',
      headers: legacy(),
      body: rawCall('get_balance', '{}', { params: ',"task":{}' }),
      fast: false,
    },
    {
      name: '2025 call with _meta',
      headers: legacy(),
      body: rawCall('get_balance', '{}', { params: ',"_meta":{"progressToken":1}' }),
      fast: false,
    },
    { name: 'id null', headers: legacy(), body: rawCall('get_balance', '{}', { id: 'null' }), fast: false },
    { name: 'id an object', headers: legacy(), body: rawCall('get_balance', '{}', { id: '{"a":1}' }), fast: false },
    {
      name: 'id beyond 2^53',
      headers: legacy(),
      body: rawCall('get_balance', '{}', { id: '12345678901234567890' }),
      fast: false,
    },
    { name: 'id -0', headers: legacy(), body: rawCall('get_balance', '{}', { id: '-0' }), fast: true },
    {
      name: '2025 body with the 2026 protocol-version header',
      headers: legacyWith('mcp-protocol-version', `mcp-protocol-version: ${MODERN}`),
      body: balance,
      fast: false,
    },
    {
      name: '2026 body with the 2025 protocol-version header',
      headers: modern('get_balance').map((l) =>
        l.startsWith('mcp-protocol-version:') ? 'mcp-protocol-version: 2025-11-25' : l,
      ),
      body: rawModernCall('get_balance'),
      fast: false,
    },
    {
      name: '2026 call with an Mcp-Session-Id',
      headers: modern('get_balance', `mcp-session-id: ${session}`),
      body: rawModernCall('get_balance'),
      fast: true,
    },
    {
      name: '2026 call accepting only text/html',
      headers: modern('get_balance').map((l) => (l.startsWith('accept:') ? 'accept: text/html' : l)),
      body: rawModernCall('get_balance'),
      fast: true,
    },
    { name: 'a chunked body', headers: legacy('transfer-encoding: chunked'), body: balance, fast: false },
  ];
};

/** One request over a raw socket (`Connection: close`), the answer read to the end. */
async function rawSend(port: number, c: RawCase): Promise<Answer> {
  const host = `127.0.0.1:${port}`;
  const body = Buffer.from(c.body);
  const chunked = c.headers.some((l) => l.startsWith('transfer-encoding:'));
  const lines = ['POST /mcp HTTP/1.1', ...c.headers.map((l) => l.replace('{host}', host))];
  if (!chunked) lines.push(`content-length: ${body.length}`);
  lines.push('connection: close', '', '');
  const framed = chunked
    ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')])
    : body;
  const bytes = await new Promise<Buffer>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
    socket.end(Buffer.concat([Buffer.from(lines.join('\r\n')), framed]));
  });
  const split = bytes.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = bytes.subarray(0, split).toString('latin1').split('\r\n');
  const headers = headerLines.map((l): [string, string] => [
    l.slice(0, l.indexOf(':')),
    l.slice(l.indexOf(':') + 1).trim(),
  ]);
  let rest = bytes.subarray(split + 4);
  if (headers.some(([n, v]) => n.toLowerCase() === 'transfer-encoding' && v === 'chunked')) {
    const whole = dechunk(bytes, split + 4);
    if (!whole) throw new Error('the chunked answer ended before its last chunk');
    rest = whole.body;
  }
  return answerOf(Number(statusLine!.split(' ')[1]), headers, rest.toString('utf8'), `http://${host}`);
}

/**
 * Request ids and timestamps differ per call; the JSON-RPC id differs per server (so each gateway call is a fresh
 * one, not an idempotent replay of the other server's).
 */
const normalized = (body: string, id: string | number) =>
  body
    .replace(/req_[0-9a-z]{10,}/g, 'req_X')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'TIME')
    .replaceAll(`"id":${JSON.stringify(id)}`, '"id":"ID"');

describe('MCP tools/call fast path', () => {
  it('answers every request of the matrix as the SDK does, both eras, string and number ids', async () => {
    const all = cases();
    let n = 0;
    for (const c of all) {
      for (const numeric of [true, false]) {
        n++;
        const fastId = numeric ? n : `call-${n}`;
        const sdkId = numeric ? 100_000 + n : `sdk-call-${n}`;
        const label = `${c.era}: ${c.name} (${numeric ? 'number' : 'string'} id)`;
        const viaFast = await send(fastEndpoint, c, fastId);
        const viaSdk = await send(sdkEndpoint, c, sdkId);
        expect(viaFast.fast, `${label}: taken by the fast path`).toBe(c.fast);
        expect(viaSdk.fast, label).toBe(false);
        expect(viaFast.status, label).toBe(viaSdk.status);
        expect(viaFast.headers, label).toEqual(viaSdk.headers);
        expect(normalized(viaFast.body, fastId), label).toBe(normalized(viaSdk.body, sdkId));
      }
    }
  });

  it('hands everything else to the SDK path with its body: parse error, tools/list, a batch, a notification', async () => {
    const bodies = [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call",',
      '',
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      JSON.stringify([{ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_balance', arguments: {} } }]),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_balance', arguments: [] } }),
    ];
    for (const body of bodies) {
      const answers = [];
      for (const endpoint of [fastEndpoint, sdkEndpoint]) {
        const res = await fetch(endpoint, {
          method: 'POST',
          headers: { ...JSON_RPC_HEADERS, 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': session },
          body,
        });
        answers.push({
          status: res.status,
          fast: res.headers.has('x-svc-mcp-fast-path'),
          body: (await res.text()).replace(/req_[0-9a-z]{10,}/g, 'req_X'),
        });
      }
      expect(answers[0], body).toEqual(answers[1]);
      expect(answers[0]!.fast, body).toBe(false);
    }
  });

  it('answers raw requests fetch cannot send as the SDK does: repeated headers, odd Host, exact body bytes', async () => {
    // Every case is sent before comparing, so a failure lists each case that drifted, not just the first.
    const got: unknown[] = [];
    const want: unknown[] = [];
    for (const c of rawCases()) {
      const viaFast = await rawSend(f.mcp.port, c);
      const viaSdk = await rawSend(sdkOnly.port, c);
      expect(viaSdk.fast, c.name).toBe(false);
      const body = (a: Answer) => normalized(a.body, 'raw');
      got.push({ case: c.name, taken: viaFast.fast, ...viaFast, fast: undefined, body: body(viaFast) });
      want.push({ case: c.name, taken: c.fast, ...viaSdk, fast: undefined, body: body(viaSdk) });
    }
    expect(got).toEqual(want);
  });

  it('in production both paths refuse a keyless call alike and serve a key or a bound session', async () => {
    const env = { ...f.mcpEnv, SVC_ENV: 'production', SVC_SMTP_URL: 'smtp://127.0.0.1:9' };
    const fast = await startProcess('mcp-prod-fast', 'mcp/main.js', { ...env, SVC_MCP_FAST_TOOL_CALLS: 'mark' });
    const sdk = await startProcess('mcp-prod-sdk', 'mcp/main.js', { ...env, SVC_MCP_FAST_TOOL_CALLS: 'off' });
    try {
      const prodCases: Case[] = [];
      for (const era of ['2025 bearer', 'modern'] as const) {
        prodCases.push(
          { name: 'anonymous', era, tool: 'get_balance', args: {}, bearer: null, fast: true },
          {
            name: 'public tool, anonymous',
            era,
            tool: 'discover_tools',
            args: { query: 'x' },
            bearer: null,
            fast: true,
          },
          { name: 'with a key', era, tool: 'get_balance', args: {}, fast: true },
        );
      }
      prodCases.push(
        {
          name: 'session, no bearer',
          era: 'session',
          tool: 'get_balance',
          args: {},
          bearer: null,
          sessionId: session,
          fast: true,
        },
        {
          name: 'unknown session',
          era: 'session',
          tool: 'get_balance',
          args: {},
          bearer: null,
          sessionId: 'nope',
          fast: true,
        },
      );
      for (const c of prodCases) {
        const label = `production, ${c.era}: ${c.name}`;
        const id = `prod-${c.era}-${c.name}`;
        const viaFast = await send(`${fast.url}/mcp`, c, id);
        const viaSdk = await send(`${sdk.url}/mcp`, c, id);
        expect(viaFast.fast, label).toBe(true);
        const comparable = (a: Answer) => ({ ...a, fast: undefined, body: normalized(a.body, id) });
        expect(comparable(viaFast), label).toEqual(comparable(viaSdk));
      }
    } finally {
      await fast.stop();
      await sdk.stop();
    }
  }, 90_000); // starts two MCP processes: ~15 s alone, more on a loaded machine

  it('a tool that throws (the gateway unreachable) is the same tool error on both paths', async () => {
    // A port that was just free: connecting to it is refused, so the gateway hop throws inside call_api.
    const probe = createServer();
    const closedPort = await new Promise<number>((resolve) =>
      probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port)),
    );
    await new Promise((resolve) => probe.close(resolve));
    const env = { ...f.mcpEnv, SVC_GATEWAY_URL: `http://127.0.0.1:${closedPort}` };
    const fast = await startProcess('mcp-no-gw-fast', 'mcp/main.js', { ...env, SVC_MCP_FAST_TOOL_CALLS: 'mark' });
    const sdk = await startProcess('mcp-no-gw-sdk', 'mcp/main.js', { ...env, SVC_MCP_FAST_TOOL_CALLS: 'off' });
    try {
      for (const era of ['2025 bearer', 'modern'] as const) {
        const c: Case = { name: 'gateway down', era, tool: 'call_api', args: free(), fast: true };
        const viaFast = await send(`${fast.url}/mcp`, c, `down-${era}`);
        const viaSdk = await send(`${sdk.url}/mcp`, c, `down-${era}`);
        expect(viaFast.fast, era).toBe(true);
        expect({ ...viaFast, fast: undefined }, era).toEqual({ ...viaSdk, fast: undefined });
        expect(JSON.parse(viaFast.body).result, era).toMatchObject({ isError: true });
        expect(viaFast.body, era).toMatch(/ECONNREFUSED/);
      }
    } finally {
      await fast.stop();
      await sdk.stop();
    }
  }, 90_000); // starts two MCP processes: ~15 s alone, more on a loaded machine

  it('a client that goes away mid-body or mid-call leaves the process serving, with nothing logged as unhandled', async () => {
    const port = f.mcp.port;
    const head = (length: number) =>
      [
        'POST /mcp HTTP/1.1',
        `host: 127.0.0.1:${port}`,
        'content-type: application/json',
        'accept: application/json, text/event-stream',
        `authorization: Bearer ${key}`,
        `content-length: ${length}`,
        '',
        '',
      ].join('\r\n');
    for (let i = 0; i < 10; i++) {
      // a body that stops short of its Content-Length, then a reset or a half-close
      const partial = connect(port, '127.0.0.1');
      partial.write(`${head(100)}{"jsonrpc":"2.0",`);
      // a whole call_api, the socket gone before the answer
      const gone = connect(port, '127.0.0.1');
      const body = rawCall('call_api', JSON.stringify(free()), { id: `"gone-${i}"` });
      gone.write(head(Buffer.byteLength(body)) + body);
      await new Promise((resolve) => gone.once('connect', resolve));
      gone.destroy();
      await new Promise((resolve) => setImmediate(resolve));
      if (i % 2) partial.destroy();
      else partial.end();
    }
    const after = await send(fastEndpoint, { name: 'after', era: 'modern', tool: 'get_balance', fast: true }, 'after');
    expect(after.status).toBe(200);
    expect(after.fast).toBe(true);
    expect(f.mcp.child.exitCode).toBeNull();
    expect(f.mcp.stderr()).not.toMatch(/unhandled|ERR_HTTP|uncaught/i);
  });

  it('a valid call_api through the fast path is a real gateway call with the upstream answer', async () => {
    const a = await send(
      fastEndpoint,
      { name: 'x', era: 'modern', tool: 'call_api', args: free(), fast: true },
      'real',
    );
    expect(a.fast).toBe(true);
    const r = JSON.parse(a.body).result;
    expect(r.isError).toBeUndefined();
    expect(r.structuredContent).toMatchObject({ status: 200, charged_cents: 0 });
  });
});
