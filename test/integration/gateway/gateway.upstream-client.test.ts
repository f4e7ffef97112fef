/**
 * The gateway's own upstream client (core/http1/) through the real gateway process, against a raw TCP upstream
 * that answers exactly the bytes each case needs: keep-alive reuse, an upstream that drops a reused socket, chunked
 * and read-to-close answers, HEAD and 204 without a body, framing attacks refused (502, not charged), timeouts
 * (504, not charged) and an https upstream. The books must balance at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeWorld, gw, type World } from './fixture.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import {
  seedListing,
  seedOrg,
  grantCredits,
  expectLedgerConsistent,
  type SeededOrg,
  usageWithIds,
} from '../../helpers/db.js';

interface RawRequest {
  method: string;
  path: string;
  headers: string;
  body: string;
  /** 0 for the first request on its connection. */
  onConn: number;
}

/** Splits a byte stream into HTTP/1.1 messages framed by Content-Length (or none): head (latin1) and body. */
function byContentLength(onMessage: (head: string, body: Buffer) => void): (d: Buffer) => void {
  let buf = Buffer.alloc(0);
  return (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const len = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buf.length < end + 4 + len) return;
      const body = buf.subarray(end + 4, end + 4 + len);
      buf = buf.subarray(end + 4 + len);
      onMessage(head, body);
    }
  };
}

/** A raw HTTP/1.1 upstream: parses requests (Content-Length bodies only) and lets `route` write any bytes back. */
function rawUpstream(route: (r: RawRequest, s: Socket) => void) {
  const stats = { connections: 0, requests: 0 };
  const onSocket = (s: Socket) => {
    stats.connections++;
    let onConn = 0;
    s.on('error', () => {});
    s.on(
      'data',
      byContentLength((head, body) => {
        const [method = '', path = ''] = head.split(' ');
        stats.requests++;
        route({ method, path, headers: head, body: body.toString('latin1'), onConn: onConn++ }, s);
      }),
    );
  };
  return { stats, onSocket };
}

function answer(s: Socket, status: string, headers: string[], body = ''): void {
  s.write(`HTTP/1.1 ${status}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${body}`);
}

const routes = (r: RawRequest, s: Socket) => {
  const p = r.path.replace(/^\/v1/, '').replace(/\?.*$/, '');
  if (p === '/ka') return answer(s, '200 OK', ['Content-Length: 2', 'Content-Type: text/plain'], 'ok');
  if (p === '/drop-second') {
    // An upstream that closed this keep-alive socket just as the gateway reused it: no byte of any answer.
    if (r.onConn > 0) return void s.destroy();
    return answer(s, '200 OK', ['Content-Length: 5'], 'first');
  }
  if (p === '/chunked') {
    s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n5;ext=1\r\nhello\r\n');
    setTimeout(() => s.write('1\r\n \r\n'), 5);
    setTimeout(() => s.write('5\r\nworld\r\n0\r\nX-Trailer: dropped\r\n\r\n'), 10);
    return;
  }
  if (p === '/bigchunked') {
    s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunk = Buffer.alloc(64 * 1024, 98);
    for (let i = 0; i < 16; i++) s.write(Buffer.concat([Buffer.from('10000\r\n'), chunk, Buffer.from('\r\n')]));
    s.write('0\r\n\r\n');
    return;
  }
  if (p === '/head-len')
    return r.method === 'HEAD'
      ? answer(s, '200 OK', ['Content-Length: 10'])
      : answer(s, '200 OK', ['Content-Length: 10'], '0123456789');
  if (p === '/nocontent') return answer(s, '204 No Content', ['X-Upstream: yes']);
  if (p === '/close-delimited') {
    answer(s, '200 OK', ['Connection: close'], 'until-');
    setTimeout(() => s.end('close'), 5);
    return;
  }
  if (p === '/smuggle') return answer(s, '200 OK', ['Content-Length: 5', 'Transfer-Encoding: chunked'], '0\r\n\r\n');
  if (p === '/two-lengths') return answer(s, '200 OK', ['Content-Length: 2', 'Content-Length: 3'], 'abc');
  if (p === '/fold') return answer(s, '200 OK', ['X-A: 1', ' folded', 'Content-Length: 2'], 'ok');
  if (p === '/many-headers')
    return answer(s, '200 OK', [...Array.from({ length: 600 }, (_, i) => `X-H${i}: v`), 'Content-Length: 2'], 'ok');
  if (p === '/stall') return; // never answers
  if (p === '/stall-body') return void s.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
  if (p === '/body-length') {
    const n = String(r.body.length);
    return answer(s, '200 OK', [`Content-Length: ${n.length}`], n);
  }
  if (p === '/echo-request') {
    const echoed = `${r.headers}\r\n\r\n${r.body}`;
    return answer(s, '200 OK', [`Content-Length: ${Buffer.byteLength(echoed)}`], echoed);
  }
  answer(s, '404 Not Found', ['Content-Length: 0']);
};

let w: World;
let g: RunningGateway;
let server: Server;
let tlsServer: TlsServer;
let certDir: string;
const plain = rawUpstream(routes);
const secure = rawUpstream(routes);
const slug = `raw-${Math.random().toString(36).slice(2, 8)}`;
const tlsSlug = `tls-${Math.random().toString(36).slice(2, 8)}`;

async function listen(s: Server | TlsServer): Promise<number> {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
}

beforeAll(async () => {
  w = await makeWorld();
  server = createServer(plain.onSocket);
  certDir = mkdtempSync(join(tmpdir(), 'svc-tls-'));
  // A self-signed certificate for 127.0.0.1, trusted by the gateway through NODE_EXTRA_CA_CERTS (Node's CA rules).
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(certDir, 'key.pem'),
      '-out',
      join(certDir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  tlsServer = createTlsServer(
    { key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) },
    secure.onSocket,
  );
  const port = await listen(server);
  const tlsPort = await listen(tlsServer);
  const endpoints = [
    { method: 'GET', path: '/{name}', priceCents: 1 },
    { method: 'POST', path: '/{name}', priceCents: 2 },
  ];
  await seedListing(w.h, { orgId: w.provider.orgId, slug, baseUrl: `http://127.0.0.1:${port}/v1`, endpoints });
  await seedListing(w.h, {
    orgId: w.provider.orgId,
    slug: tlsSlug,
    baseUrl: `https://127.0.0.1:${tlsPort}`,
    endpoints,
  });
  g = await startGateway(w.dataDir, {
    SVC_GATEWAY_HEADERS_TIMEOUT_MS: '1000',
    SVC_GATEWAY_BODY_TIMEOUT_MS: '1000',
    NODE_EXTRA_CA_CERTS: join(certDir, 'cert.pem'),
  });
}, 30_000);

afterAll(async () => {
  await g?.stop();
  server?.close();
  tlsServer?.close();
  await w?.cleanup();
  rmSync(certDir, { recursive: true, force: true });
});

/**
 * One raw keep-alive connection to the gateway (fetch refuses some bytes and hides the connection): `send` writes
 * bytes, `answers` counts the complete answers read so far (Content-Length framed, as the gateway answers these).
 */
function gatewayConnection() {
  const s = createConnection(g.port, '127.0.0.1');
  const answers: { head: string; body: string }[] = [];
  s.on('error', () => undefined);
  s.on(
    'data',
    byContentLength((head, body) => answers.push({ head, body: body.toString('utf8') })),
  );
  return { socket: s, answers, send: (b: string | Buffer) => s.write(b) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function consumer(cents = 100): Promise<SeededOrg> {
  const c = await seedOrg(w.h);
  await grantCredits(w.h, c.orgId, cents);
  return c;
}

async function usageOf(orgId: string) {
  return w.h.db
    .selectFrom(usageWithIds(w.h.db))
    .select(['status', 'charged_cents', 'error_code'])
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .execute();
}

describe('the upstream client', () => {
  it('keeps one upstream socket alive across sequential calls, and sends one well-formed request per call', async () => {
    const c = await consumer();
    const before = plain.stats.connections;
    for (let i = 0; i < 20; i++) {
      const r = await gw(g.url, 'GET', `/${slug}/ka?i=${i}`, { key: c.key });
      expect(r.status).toBe(200);
      expect(r.text).toBe('ok');
      expect(r.headers.get('x-svc-charged-cents')).toBe('1');
    }
    expect(plain.stats.connections - before).toBeLessThanOrEqual(1);
    const echo = await gw(g.url, 'POST', `/${slug}/echo-request`, { key: c.key, body: 'payload' });
    const lines = echo.text.split('\r\n');
    expect(lines[0]).toBe('POST /v1/echo-request HTTP/1.1');
    expect(lines).toContain(`host: 127.0.0.1:${(server.address() as AddressInfo).port}`);
    expect(lines).toContain('content-length: 7');
    expect(echo.text.endsWith('payload')).toBe(true);
    expect(echo.text.toLowerCase()).not.toContain(c.key.toLowerCase());
  });

  it('an idempotent call whose reused socket the upstream dropped is sent once more on a new socket; a POST is not', async () => {
    const c = await consumer();
    const before = plain.stats.requests;
    const get = await gw(g.url, 'GET', `/${slug}/drop-second`, { key: c.key });
    expect(get.status).toBe(200);
    expect(get.text).toBe('first');
    expect(plain.stats.requests - before).toBe(2); // the dropped attempt, then the retry
    // The socket that answered is now reused: the POST is dropped and, not idempotent, not repeated.
    const post = await gw(g.url, 'POST', `/${slug}/drop-second`, { key: c.key, body: 'x' });
    expect(post.status).toBe(502);
    expect(post.code).toBe('upstream_error');
    expect(post.json?.detail).toContain('connection reset');
    expect(post.headers.get('x-svc-charged-cents')).toBe('0');
    expect(plain.stats.requests - before).toBe(3);
    expect(await usageOf(c.orgId)).toEqual([
      { status: 200, charged_cents: 1, error_code: null },
      { status: 502, charged_cents: 0, error_code: 'upstream_error' },
    ]);
  });

  it('relays chunked answers (small ones whole, large ones streamed) without trailers', async () => {
    const c = await consumer();
    const small = await gw(g.url, 'GET', `/${slug}/chunked`, { key: c.key });
    expect(small.status).toBe(200);
    expect(small.text).toBe('hello world');
    expect(small.headers.get('x-trailer')).toBeNull();
    const big = await fetch(`${g.url}/${slug}/bigchunked`, { headers: { authorization: `Bearer ${c.key}` } });
    expect(big.status).toBe(200);
    const body = Buffer.from(await big.arrayBuffer());
    expect(body.length).toBe(16 * 64 * 1024);
    expect(body.every((b) => b === 98)).toBe(true);
    expect(big.headers.get('x-svc-charged-cents')).toBe('1');
  });

  it('HEAD and 204 carry no body and keep the socket usable; a read-to-close answer ends with the close', async () => {
    const c = await consumer();
    const before = plain.stats.connections;
    const head = await fetch(`${g.url}/${slug}/head-len`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${c.key}` },
    });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const get = await gw(g.url, 'GET', `/${slug}/head-len`, { key: c.key });
    expect(get.text).toBe('0123456789');
    const none = await gw(g.url, 'GET', `/${slug}/nocontent`, { key: c.key });
    expect(none.status).toBe(204);
    expect(none.text).toBe('');
    expect(none.headers.get('x-upstream')).toBe('yes');
    expect(plain.stats.connections - before).toBeLessThanOrEqual(1);
    const closed = await gw(g.url, 'GET', `/${slug}/close-delimited`, { key: c.key });
    expect(closed.status).toBe(200);
    expect(closed.text).toBe('until-close');
  });

  it.each([
    ['Content-Length with Transfer-Encoding', 'smuggle'],
    ['two Content-Length headers', 'two-lengths'],
    ['an obs-folded header', 'fold'],
    ['600 header lines', 'many-headers'],
  ])('refuses an answer with %s: 502 upstream_error, not charged', async (_name, path) => {
    const c = await consumer();
    const r = await gw(g.url, 'GET', `/${slug}/${path}`, { key: c.key });
    expect(r.status).toBe(502);
    expect(r.code).toBe('upstream_error');
    expect(r.json?.detail).toContain('invalid HTTP answer');
    expect(r.headers.get('x-svc-charged-cents')).toBe('0');
    expect(await usageOf(c.orgId)).toEqual([{ status: 502, charged_cents: 0, error_code: 'upstream_error' }]);
  });

  it('an upstream that never answers, or stops mid-body, is a 504 and not charged', async () => {
    const c = await consumer();
    const stall = await gw(g.url, 'GET', `/${slug}/stall`, { key: c.key });
    expect(stall.status).toBe(504);
    expect(stall.code).toBe('upstream_timeout');
    const body = await gw(g.url, 'GET', `/${slug}/stall-body`, { key: c.key });
    expect(body.status).toBe(504);
    expect(await usageOf(c.orgId)).toEqual([
      { status: 504, charged_cents: 0, error_code: 'upstream_timeout' },
      { status: 504, charged_cents: 0, error_code: 'upstream_timeout' },
    ]);
    // The timed-out sockets were dropped, not reused: the next call is answered normally.
    expect((await gw(g.url, 'GET', `/${slug}/ka`, { key: c.key })).text).toBe('ok');
  }, 15_000);

  it('reaches an https upstream (certificate checked against the CA store), with keep-alive', async () => {
    const c = await consumer();
    const before = secure.stats.connections;
    for (let i = 0; i < 3; i++) {
      const r = await gw(g.url, 'GET', `/${tlsSlug}/ka`, { key: c.key });
      expect(r.status).toBe(200);
      expect(r.text).toBe('ok');
    }
    expect(secure.stats.connections - before).toBe(1);
    await expectLedgerConsistent(w.h);
  });

  it("a header value the consumer sent as UTF-8 reaches the upstream as those bytes; it cannot split the upstream's request", async () => {
    const c = await consumer();
    const before = plain.stats.requests;
    // U+010D U+010A: written as latin1 their low bytes would be CR LF, ending the header line early.
    const value = Buffer.from('a\u010d\u010ax-injected: 1', 'utf8');
    const conn = gatewayConnection();
    conn.send(
      Buffer.concat([
        Buffer.from(`GET /${slug}/echo-request HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${c.key}\r\nx-note: `),
        value,
        Buffer.from('\r\n\r\n'),
      ]),
    );
    await expect.poll(() => conn.answers.length, { timeout: 5_000 }).toBe(1);
    conn.socket.destroy();
    expect(conn.answers[0]!.head.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    // The upstream echoes the head it parsed (latin1): one x-note line carrying the consumer's bytes, no other.
    const lines = conn.answers[0]!.body.split('\r\n');
    expect(lines.filter((l) => l.toLowerCase().startsWith('x-injected'))).toEqual([]);
    expect(lines).toContain(`x-note: ${value.toString('latin1')}`);
    expect(plain.stats.requests - before).toBe(1);
  });

  it('a request body that streams in for longer than the headers timeout is not a timeout; the timer starts once it is sent', async () => {
    const c = await consumer();
    const conn = gatewayConnection();
    // 120 KB (streamed, over the 64 KiB buffering limit) in 6 parts 300 ms apart: ~1.8 s against a 1 s timeout.
    const part = 'p'.repeat(20_000);
    conn.send(
      `POST /${slug}/body-length HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${c.key}\r\ncontent-length: ${6 * part.length}\r\n\r\n`,
    );
    for (let i = 0; i < 6; i++) {
      conn.send(part);
      await sleep(300);
    }
    await expect.poll(() => conn.answers.length, { timeout: 5_000 }).toBe(1);
    conn.socket.destroy();
    expect(conn.answers[0]!.head.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(conn.answers[0]!.body).toBe(String(6 * part.length));
    expect(await usageOf(c.orgId)).toEqual([{ status: 200, charged_cents: 2, error_code: null }]);
  });
});
