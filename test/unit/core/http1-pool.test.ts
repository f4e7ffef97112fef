/**
 * The upstream pool in-process against a real node:http server on loopback: requests that cannot be written as
 * HTTP/1.1 fail without a byte sent, a socket the upstream closed while idle is never reused, sequential
 * calls share one socket, and concurrent calls to one origin never open more than its share of sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createUpstreamPool } from '../../../gateway/steps/forward.js';
import { UpstreamPool, type UpstreamPoolOptions } from '../../../core/http1/pool.js';
import { egressPolicy } from '../../../core/egress.js';
import { callVia } from '../../helpers/upstream-pool.js';
import { RequestBody } from '../../../gateway/request-body.js';

let server: Server;
let origin: string;
let connections = 0;
let requests = 0;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    res.setHeader('content-type', 'text/plain');
    res.end(`${req.method} ${req.url}`);
  });
  server.on('connection', (s) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const pool = () =>
  createUpstreamPool({
    connections: 4,
    connectTimeoutMs: 2_000,
    headersTimeoutMs: 2_000,
    bodyTimeoutMs: 2_000,
    egress: egressPolicy({ isProduction: false, egressAllow: [] }),
  });

/** A pool built directly, with 10-s timeouts and keep-alive unless `over` says otherwise. */
const poolWith = (over: Partial<UpstreamPoolOptions>) =>
  new UpstreamPool({
    connections: 4,
    connectTimeoutMs: 10_000,
    headersTimeoutMs: 10_000,
    bodyTimeoutMs: 10_000,
    keepAliveMs: 10_000,
    maxHeaderBytes: 16_384,
    maxHeaderCount: 100,
    egress: egressPolicy({ isProduction: false, egressAllow: [] }),
    ...over,
  });

describe('upstream pool', () => {
  it('shares one socket between sequential calls', async () => {
    const p = pool();
    const before = connections;
    for (let i = 0; i < 10; i++) expect((await callVia(p, origin, { path: `/n/${i}` })).body).toBe(`GET /n/${i}`);
    expect(connections - before).toBe(1);
    expect(p.stats(origin)).toEqual({ open: 1, idle: 1 });
    p.close();
  });

  it('opens at most `connections` sockets per origin: calls beyond wait for one, and another origin has its own', async () => {
    // An upstream that holds each answer, so that calls overlap.
    let slowSockets = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    const slow = createServer((req, res) => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      setTimeout(() => {
        inFlight--;
        res.end(`slow ${req.url}`);
      }, 30);
    });
    slow.on('connection', () => slowSockets++);
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const slowOrigin = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    const p = pool(); // 4 per origin
    try {
      const calls = Array.from({ length: 12 }, (_, i) => callVia(p, slowOrigin, { path: `/s/${i}` }));
      // While those wait for the slow origin's four sockets, the other origin is not held up behind them.
      expect((await callVia(p, origin, { path: '/fast' })).body).toBe('GET /fast');
      expect(p.stats(slowOrigin).open).toBe(4);
      const answers = await Promise.all(calls);
      expect(answers.map((a) => a.body)).toEqual(Array.from({ length: 12 }, (_, i) => `slow /s/${i}`));
      expect(slowSockets).toBe(4);
      expect(maxInFlight).toBe(4);
      expect(p.stats(slowOrigin)).toEqual({ open: 4, idle: 4 });
      expect(p.stats(origin)).toEqual({ open: 1, idle: 1 });
    } finally {
      p.close();
      slow.closeAllConnections();
      await new Promise((r) => slow.close(r));
    }
  });

  it.each([
    ['a space in the path', { path: '/a b' }],
    ['a non-ASCII path', { path: '/caf\u00e9' }],
    ['a header name with a space', { headers: { 'x bad': 'v' } }],
    ['a header value with CR LF', { headers: { 'x-a': 'v\r\nx-injected: 1' } }],
    ['a method that is not a token', { method: 'GE T' }],
  ])('refuses to send %s, and nothing reaches the upstream', async (_n, opts) => {
    const p = pool();
    const before = requests;
    await expect(callVia(p, origin, opts)).rejects.toMatchObject({ code: 'EUPSTREAM_REQUEST', kind: 'error' });
    expect(requests).toBe(before);
    p.close();
  });

  it("closes an idle socket 1 s before the upstream's Keep-Alive timeout, before the upstream would", async () => {
    const short = createServer((_req, res) => res.end('ok'));
    short.keepAliveTimeout = 2_000; // answers carry `Keep-Alive: timeout=2`
    // A socket the pool closes first reaches the server as an end (FIN); one the server times out never does.
    let closedByPool = 0;
    short.on('connection', (s: Socket) => s.on('end', () => closedByPool++));
    await new Promise<void>((r) => short.listen(0, '127.0.0.1', r));
    const o = `http://127.0.0.1:${(short.address() as AddressInfo).port}`;
    const p = pool();
    expect((await callVia(p, o)).headers).toContainEqual(['keep-alive', 'timeout=2']);
    expect(p.stats(o)).toEqual({ open: 1, idle: 1 });
    await expect.poll(() => p.stats(o).open, { timeout: 5_000, interval: 50 }).toBe(0);
    await expect.poll(() => closedByPool, { timeout: 1_000 }).toBe(1);
    p.close();
    short.closeAllConnections();
    await new Promise((r) => short.close(r));
  });

  it('drops a socket the upstream closed while idle and opens a new one', async () => {
    const p = pool();
    expect((await callVia(p, origin)).body).toBe('GET /');
    const before = connections;
    for (const s of sockets) s.destroy(); // the upstream closes its idle keep-alive sockets
    await new Promise((r) => setTimeout(r, 50));
    expect(p.stats(origin)).toEqual({ open: 0, idle: 0 });
    expect((await callVia(p, origin)).body).toBe('GET /');
    expect(connections - before).toBe(1);
    p.close();
  });

  it("drains a streamed request body whose call failed before it was sent, so the consumer's upload does not stall", async () => {
    // A socket that never connects: the call fails on its connect timeout with the body not yet taken.
    const p = new UpstreamPool({
      connections: 1,
      connectTimeoutMs: 50,
      headersTimeoutMs: 2_000,
      bodyTimeoutMs: 2_000,
      keepAliveMs: 30_000,
      maxHeaderBytes: 16 * 1024,
      maxHeaderCount: 512,
      egress: egressPolicy({ isProduction: false, egressAllow: [] }),
      connector: () => new Socket(),
    });
    // Like the gateway's RequestBody: it holds what the client sent until someone reads, then lets the client go on.
    const body = new Readable({ highWaterMark: 16, read: () => undefined });
    for (let i = 0; i < 4; i++) body.push(Buffer.alloc(1024, 120));
    body.push(null);
    let ended = false;
    body.once('end', () => (ended = true));
    await expect(
      callVia(p, origin, { method: 'POST', headers: { 'content-length': '4096' }, body }),
    ).rejects.toMatchObject({ code: 'EUPSTREAM_CONNECT_TIMEOUT', kind: 'timeout' });
    await expect.poll(() => ended, { timeout: 2_000 }).toBe(true);
    p.close();
  });
  it('a streamed body over the cap before any consumer took it fails quietly; its upstream call fails at once, unsent', async () => {
    // On PostgreSQL the pipeline awaits the lease before the upstream call takes the body: the overflow comes first.
    const res = { pause() {}, resume() {} };
    const body = new RequestBody(res, 1024, () => true);
    body.feed(new ArrayBuffer(800), false);
    body.feed(new ArrayBuffer(800), false); // over 1024: no 'error' listener of a consumer yet, and no crash
    expect(body.overflow).not.toBeNull();
    expect(body.errored?.message).toMatch(/SVC_GATEWAY_MAX_REQUEST_BYTES/);
    const before = requests;
    const t0 = Date.now();
    await expect(
      callVia(pool(), origin, { method: 'POST', headers: { 'transfer-encoding': 'chunked' }, body }),
    ).rejects.toMatchObject({ kind: 'error', message: expect.stringMatching(/SVC_GATEWAY_MAX_REQUEST_BYTES/) });
    expect(Date.now() - t0).toBeLessThan(1_000); // not the 2 s body timeout
    expect(requests).toBe(before);
  });
  it('never hands a call a socket past its idle time, even before the sweep closes it', async () => {
    // Idle sockets live 100 ms; the sweep runs every second, so at 250 ms only the check at acquire can refuse it.
    const p = poolWith({ keepAliveMs: 100 });
    try {
      const before = connections;
      await callVia(p, origin, { path: '/a' });
      await callVia(p, origin, { path: '/b' }); // at once: the same socket
      expect(connections - before).toBe(1);
      await new Promise((r) => setTimeout(r, 250));
      expect((await callVia(p, origin, { path: '/c' })).body).toBe('GET /c');
      expect(connections - before).toBe(2);
    } finally {
      p.close();
    }
  });

  it('close() fails the calls in flight and waiting, and every call after it', async () => {
    const held = createServer(() => {
      /* never answers */
    });
    await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
    const heldOrigin = `http://127.0.0.1:${(held.address() as AddressInfo).port}`;
    const p = poolWith({ connections: 1 });
    try {
      const inFlight = callVia(p, heldOrigin, { path: '/1' });
      const waiting = callVia(p, heldOrigin, { path: '/2' });
      while (p.stats(heldOrigin).open === 0) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 50));
      p.close();
      const closed = { code: 'EUPSTREAM_POOL_CLOSED', kind: 'error' };
      await expect(inFlight).rejects.toMatchObject(closed);
      await expect(waiting).rejects.toMatchObject(closed);
      await expect(callVia(p, heldOrigin, { path: '/3' })).rejects.toMatchObject(closed);
      expect(p.stats(heldOrigin)).toEqual({ open: 0, idle: 0 });
    } finally {
      held.closeAllConnections();
      await new Promise((r) => held.close(r));
    }
  });
});
