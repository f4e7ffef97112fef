/**
 * The control side's hop to the gateway (core/gateway-calls.ts) over svc's HTTP/1.1 client, against a raw TCP
 * "gateway" on loopback that records each request's bytes and answers what the test scripts: what the hop sends
 * (target, credential, Idempotency-Key, max price, body, header names), how it summarises an answer (our problem vs an
 * upstream's, X-Svc-* repeats, base64, the 64 KiB cap, a 1xx first, a chunked body), that sequential calls share one
 * socket, and that a refused connection rejects with its errno.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { BODY_CAP, createGatewayCalls, type GatewayCall, type GatewayCalls } from '../../../core/gateway-calls.js';

/** One scripted answer per request, in order (null: never answer it); each request's head and body as received. */
let answers: (Buffer | null)[] = [];
let received: string[] = [];
let connections = 0;
let server: Server;
let base: string;
let hop: GatewayCalls;

beforeAll(async () => {
  server = createServer((s: Socket) => {
    connections++;
    let buf = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const len = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        received.push(buf.subarray(0, end + 4 + len).toString('utf8'));
        buf = buf.subarray(end + 4 + len);
        const next = answers.length > 0 ? answers.shift() : undefined;
        if (next === null) continue;
        s.write(next ?? Buffer.from('HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n'));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/gw`;
  hop = createGatewayCalls(base);
});
afterAll(async () => {
  await hop.close();
  await new Promise((r) => server.close(r));
});
afterEach(() => {
  answers = [];
  received = [];
});

const answer = (head: string, body: Buffer | string = ''): Buffer =>
  Buffer.concat([
    Buffer.from(`${head}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`, 'latin1'),
    Buffer.from(body),
  ]);

const callOf = (over: Partial<GatewayCall> = {}): GatewayCall => ({
  key: 'svc_live_testkeytestkeytestkey00',
  slug: 'weather',
  method: 'GET',
  path: '/current',
  query: { city: 'Oslo' },
  body: undefined,
  idempotencyKey: 'mcp_abc',
  maxPriceCents: undefined,
  ...over,
});

describe('the gateway hop', () => {
  it('sends the target under the base path, the key, the Idempotency-Key, the max price and a JSON body', async () => {
    answers.push(answer('HTTP/1.1 200 OK\r\ncontent-type: application/json', '{}'));
    await hop.call(callOf({ method: 'POST', body: { q: 'é' }, maxPriceCents: 3, headers: { 'X-Api-Version': '2' } }));
    const [req] = received;
    const [line, ...rest] = req!.split('\r\n');
    expect(line).toBe('POST /gw/weather/current?city=Oslo HTTP/1.1');
    expect(rest).toEqual(
      expect.arrayContaining([
        `host: ${new URL(base).host}`,
        'authorization: Bearer svc_live_testkeytestkeytestkey00',
        'idempotency-key: mcp_abc',
        'x-svc-max-price-cents: 3',
        'x-api-version: 2',
        'content-type: application/json',
        `content-length: ${Buffer.byteLength('{"q":"é"}')}`,
      ]),
    );
    expect(req!.endsWith('\r\n\r\n{"q":"é"}')).toBe(true);
  });

  it('sends a raw body with its own content type, and an empty POST with Content-Length: 0', async () => {
    answers.push(answer('HTTP/1.1 200 OK'), answer('HTTP/1.1 200 OK'));
    await hop.call(callOf({ method: 'POST', rawBody: { contentType: 'text/plain', text: 'a=b' } }));
    await hop.call(callOf({ method: 'POST' }));
    expect(received[0]).toMatch(/\r\ncontent-type: text\/plain\r\n/);
    expect(received[0]!.endsWith('\r\n\r\na=b')).toBe(true);
    expect(received[1]).toMatch(/\r\ncontent-length: 0\r\n\r\n$/);
    expect(received[1]).not.toMatch(/content-type/);
  });

  it("summarises the gateway's answer: charge headers, kept headers, X-Svc-* repeats joined, replay flag", async () => {
    answers.push(
      answer(
        'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-svc-request-id: req_1\r\nx-svc-price-cents: 2\r\n' +
          'x-svc-charged-cents: 2\r\nx-svc-balance-cents: 98\r\nx-svc-idempotent-replay: true\r\n' +
          'x-svc-note: a\r\nx-svc-note: b\r\netag: "v1"\r\nx-upstream-other: dropped',
        '{"t":1}',
      ),
    );
    const a = await hop.call(callOf());
    expect(a).toMatchObject({
      status: 200,
      problem: null,
      body: '{"t":1}',
      body_encoding: 'utf8',
      body_truncated: false,
      body_bytes: 7,
      request_id: 'req_1',
      price_cents: 2,
      charged_cents: 2,
      balance_cents: 98,
      idempotent_replay: true,
    });
    expect(a.headers).toEqual({
      'content-type': 'application/json',
      'content-length': '7',
      etag: '"v1"',
      'x-svc-request-id': 'req_1',
      'x-svc-price-cents': '2',
      'x-svc-charged-cents': '2',
      'x-svc-balance-cents': '98',
      'x-svc-idempotent-replay': 'true',
      'x-svc-note': 'a, b',
    });
  });

  it("takes a problem as the gateway's only when it carries the call's request id", async () => {
    const problem = (rid: string) =>
      JSON.stringify({ type: 'about:blank', code: 'insufficient_credit', request_id: rid });
    const head = 'HTTP/1.1 402 Payment Required\r\ncontent-type: application/problem+json\r\nx-svc-request-id: req_9';
    answers.push(answer(head, problem('req_9')), answer(head, problem('req_other')), answer(head, 'not json'));
    expect((await hop.call(callOf())).problem).toMatchObject({ code: 'insufficient_credit' });
    expect((await hop.call(callOf())).problem).toBeNull();
    const malformed = await hop.call(callOf());
    expect(malformed.problem).toBeNull();
    expect(malformed.body).toBe('not json');
  });

  it('gives a binary body as base64 and caps the body at 64 KiB, counting all of it', async () => {
    const big = Buffer.alloc(BODY_CAP + 10, 0x61);
    answers.push(answer('HTTP/1.1 200 OK\r\ncontent-type: image/png', Buffer.from([0, 1, 2, 255])));
    answers.push(answer('HTTP/1.1 200 OK\r\ncontent-type: text/plain', big));
    const png = await hop.call(callOf());
    expect(png).toMatchObject({ body: 'AAEC/w==', body_encoding: 'base64', body_bytes: 4 });
    const text = await hop.call(callOf());
    expect(text).toMatchObject({ body_truncated: true, body_bytes: BODY_CAP + 10, body_encoding: 'utf8' });
    expect(text.body.length).toBe(BODY_CAP);
  });

  it('reads past a 1xx to the final answer, and a chunked body whole', async () => {
    answers.push(
      Buffer.from(
        'HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n' +
          'HTTP/1.1 201 Created\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n' +
          '3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n',
      ),
    );
    const a = await hop.call(callOf());
    expect(a).toMatchObject({ status: 201, body: 'abcde', body_bytes: 5 });
  });

  it('carries sequential calls on one keep-alive socket', async () => {
    const before = connections;
    for (let i = 0; i < 3; i++) answers.push(answer('HTTP/1.1 200 OK', String(i)));
    const bodies: string[] = [];
    for (let i = 0; i < 3; i++) bodies.push((await hop.call(callOf())).body);
    expect(bodies).toEqual(['0', '1', '2']);
    expect(connections - before).toBeLessThanOrEqual(1);
  });

  it('rejects naming the gateway, with the errno, when the gateway is not listening', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const dead = createGatewayCalls(`http://127.0.0.1:${port}`);
    await expect(dead.call(callOf())).rejects.toMatchObject({
      code: 'ECONNREFUSED',
      message: expect.stringMatching(/^the gateway at http:\/\/127\.0\.0\.1:\d+ failed: connect ECONNREFUSED/),
    });
    await dead.close();
  });
  it("never takes the hop's own headers from a caller: framing, connection, credential, key and max price", async () => {
    answers.push(answer('HTTP/1.1 200 OK'));
    await hop.call(
      callOf({
        method: 'POST',
        body: { a: 1 },
        maxPriceCents: 5,
        headers: {
          Host: 'evil.example',
          'Content-Length': '999',
          'Transfer-Encoding': 'chunked',
          Connection: 'close',
          Authorization: 'Bearer someone-else',
          'Idempotency-Key': 'theirs',
          'X-Svc-Max-Price-Cents': '9999',
          'X-Ok': 'yes',
        },
      }),
    );
    const lines = received[0]!.split('\r\n\r\n')[0]!.split('\r\n').slice(1);
    expect(lines.sort()).toEqual(
      [
        `host: ${new URL(base).host}`,
        'x-ok: yes',
        'authorization: Bearer svc_live_testkeytestkeytestkey00',
        'idempotency-key: mcp_abc',
        'x-svc-max-price-cents: 5',
        'content-type: application/json',
        'content-length: 7',
      ].sort(),
    );
  });

  it("refuses a header value with a control character as the caller's error, sending nothing", async () => {
    await expect(hop.call(callOf({ headers: { 'X-Note': 'a\r\nx-evil: 1' } }))).rejects.toMatchObject({
      code: 'validation_failed',
      status: 400,
    });
    await expect(hop.call(callOf({ headers: { 'X-Note': 'bell\u0007' } }))).rejects.toMatchObject({
      code: 'validation_failed',
    });
    expect(received).toEqual([]);
  });

  it('close() fails a call in flight, naming the gateway, and every call after it', async () => {
    const own = createGatewayCalls(base);
    answers.push(null);
    const inFlight = own.call(callOf());
    while (received.length === 0) await new Promise((r) => setTimeout(r, 5));
    await own.close();
    const closed = { code: 'EUPSTREAM_POOL_CLOSED', message: expect.stringMatching(/^the gateway at .* failed: /) };
    await expect(inFlight).rejects.toMatchObject(closed);
    await expect(own.call(callOf())).rejects.toMatchObject(closed);
  });
});
