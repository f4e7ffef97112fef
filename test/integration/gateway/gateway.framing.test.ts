/**
 * Strict request framing (RFC 9112), each case by raw socket (fetch would refuse or normalise the bytes): what the
 * gateway's handler refuses with an answer (gateway/framing.ts), and what uWS 20.30 decides before any handler runs,
 * pinned as docs/security.md "What each HTTP server answers" states it. Nothing here is forwarded or charged.
 * Also: the answer headers every call carries, and no header naming the server.
 */
import { describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { gw, useGatewayWorld, type World } from './fixture.js';
import type { RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, grantCredits, usageWithIds } from '../../helpers/db.js';
import { MAX_HEADER_LINES } from '../../../gateway/framing.js';
import { probeNative } from '../../../gateway/server-choice.js';

let w: World;
let g: RunningGateway;
useGatewayWorld((world, gateway) => {
  w = world;
  g = gateway;
});

/**
 * uWS 20.30's pre-handler decisions (the native build on Node 20) are pinned; the JavaScript fallback and other
 * native builds must do no worse: no answer, or a 4xx. uWS 20.57 (Node 22-25 with glibc >= 2.38) answers most of
 * these itself (400, 405, 431; a lowercase method reaches the handler: 401 without a key), measured in
 * scripts/debian13-native.sh's userland. The gateway runs the first build that loads here, as probeNative finds.
 */
const PINNED_BUILD =
  probeNative()
    .attempts.find((a) => a.loaded)
    ?.build.includes('(uWS v20.30)') ?? false;
async function nativeServer(): Promise<boolean> {
  const native = ((await (await fetch(`${g.url}/healthz`)).json()) as { native: boolean }).native;
  return native && PINNED_BUILD;
}

/** What uWS does without an answer, a server that answers instead must answer with a 4xx problem. */
function expectNoAnswerOr4xx(r: Exchange, native: boolean, name = ''): void {
  if (native || r.text === '') expect(r.text, name).toBe('');
  else expect(Number(r.text.split(' ')[1]), name).toBeGreaterThanOrEqual(400);
}

interface Exchange {
  text: string;
  /** ms from sending to the server closing the connection; null if still open after waitMs. */
  closedAfter: number | null;
}

/** Sends raw bytes (latin1) and reads until the server closes or waitMs passes. */
function raw(bytes: string, waitMs = 3000): Promise<Exchange> {
  return new Promise((resolve) => {
    const s = connect(g.port, '127.0.0.1');
    let text = '';
    let t0 = 0;
    s.setEncoding('latin1');
    s.on('data', (d: string) => {
      text += d;
    });
    s.on('close', () => resolve({ text, closedAfter: Date.now() - t0 }));
    s.on('error', () => undefined);
    s.setTimeout(waitMs, () => {
      resolve({ text, closedAfter: null });
      s.destroy();
    });
    s.on('connect', () => {
      t0 = Date.now();
      s.write(bytes, 'latin1');
    });
  });
}

function answerOf(text: string): { status: number; head: string; body: Record<string, unknown> } {
  const end = text.indexOf('\r\n\r\n');
  return {
    status: Number(text.split(' ')[1]),
    head: text.slice(0, end).toLowerCase(),
    body: JSON.parse(text.slice(end + 4)) as Record<string, unknown>,
  };
}

async function usageRows(orgId: string): Promise<number> {
  const r = await w.h.db
    .selectFrom(usageWithIds(w.h.db))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

async function paidOrg() {
  const c = await seedOrg(w.h);
  await grantCredits(w.h, c.orgId, 100);
  return c;
}

const post = (key: string, framing: string, body: string) =>
  `POST /${w.slug}/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n${framing}\r\n${body}`;

describe('Transfer-Encoding other than exactly chunked: 400, closed, nothing forwarded or charged', () => {
  it.each([
    ['gzip', 'Transfer-Encoding: gzip\r\n'],
    ['identity', 'Transfer-Encoding: identity\r\n'],
    ['xchunked', 'Transfer-Encoding: xchunked\r\n'],
    ['chunked, identity', 'Transfer-Encoding: chunked, identity\r\n'],
    ['gzip, chunked', 'Transfer-Encoding: gzip, chunked\r\n'],
    ['chunked twice', 'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n'],
    ['empty', 'Transfer-Encoding: \r\n'],
  ])('%s', async (_, te) => {
    const c = await paidOrg();
    const seen = w.upstream.seen.length;
    const r = await raw(post(c.key, te, '3\r\nabc\r\n0\r\n\r\n'));
    const a = answerOf(r.text);
    expect(a.status).toBe(400);
    expect(a.body).toMatchObject({ code: 'validation_failed', request_id: expect.stringMatching(/^req_/) });
    expect(a.body.errors).toEqual([{ path: 'header:Transfer-Encoding', message: expect.any(String) }]);
    expect(a.head).toContain('connection: close');
    expect(r.closedAfter).not.toBeNull();
    expect(r.closedAfter!).toBeLessThan(1000);
    expect(w.upstream.seen.length).toBe(seen);
    expect(await usageRows(c.orgId)).toBe(0);
  });

  it('Transfer-Encoding: chunked (any case) is relayed and charged', async () => {
    for (const te of ['chunked', 'Chunked']) {
      const c = await paidOrg();
      const r = await raw(post(c.key, `Transfer-Encoding: ${te}\r\nConnection: close\r\n`, '3\r\nabc\r\n0\r\n\r\n'));
      expect(r.text.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
      expect(r.text).toContain('"body":"abc"');
      expect(await usageRows(c.orgId)).toBe(1);
    }
  });
});

describe('Content-Length that is not plain digits: 400 with an answer (not a silent close), nothing forwarded', () => {
  it.each(['+2', 'abc', '0x2', '-1', '2,2', '00000000000000000002', '99999999999999999999', '', '2 2'])(
    'Content-Length: %s',
    async (v) => {
      const c = await paidOrg();
      const seen = w.upstream.seen.length;
      const r = await raw(post(c.key, `Content-Length: ${v}\r\n`, 'ab'));
      const a = answerOf(r.text);
      expect(a.status).toBe(400);
      expect(a.body).toMatchObject({ code: 'validation_failed' });
      expect(a.body.errors).toEqual([{ path: 'header:Content-Length', message: expect.any(String) }]);
      expect(a.head).toContain('x-svc-request-id: req_');
      expect(r.closedAfter).not.toBeNull();
      expect(r.closedAfter!).toBeLessThan(1000);
      expect(w.upstream.seen.length).toBe(seen);
      expect(await usageRows(c.orgId)).toBe(0);
    },
  );
});

describe('requests uWS 20.30 refuses before the handler runs (pinned; docs/security.md)', () => {
  it.each([
    ['Content-Length then Transfer-Encoding', 'Content-Length: 3\r\nTransfer-Encoding: chunked\r\n'],
    ['Transfer-Encoding then Content-Length', 'Transfer-Encoding: chunked\r\nContent-Length: 3\r\n'],
  ])('%s: closed at once without an answer, nothing forwarded', async (_, framing) => {
    const c = await paidOrg();
    const seen = w.upstream.seen.length;
    const r = await raw(post(c.key, framing, '3\r\nabc\r\n0\r\n\r\n'));
    expectNoAnswerOr4xx(r, await nativeServer());
    expect(r.closedAfter).not.toBeNull();
    expect(r.closedAfter!).toBeLessThan(1000);
    expect(w.upstream.seen.length).toBe(seen);
    expect(await usageRows(c.orgId)).toBe(0);
  });

  it.each(['FOO', 'PROPFIND', 'get', 'A'.repeat(100)])('method %s: closed at once without an answer', async (m) => {
    const seen = w.upstream.seen.length;
    const r = await raw(`${m} /${w.slug}/users/1 HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectNoAnswerOr4xx(r, await nativeServer());
    expect(r.closedAfter).not.toBeNull();
    expect(r.closedAfter!).toBeLessThan(1000);
    expect(w.upstream.seen.length).toBe(seen);
  });

  it('held without an answer until uWS idle timeout (~10 s): too many header lines, bad request lines, bare LF, obs-fold, no Host', async () => {
    const many = Array.from({ length: MAX_HEADER_LINES }, (_, i) => `X-A${i}: 1\r\n`).join('');
    const cases = {
      [`${MAX_HEADER_LINES + 1} header lines`]: `GET /${w.slug}/users/1 HTTP/1.1\r\nHost: x\r\n${many}\r\n`,
      'request line GARBAGE': 'GARBAGE\r\n\r\n',
      'request line without a version': `GET /${w.slug}/users/1\r\nHost: x\r\n\r\n`,
      'HTTP/2.0 request line': `GET /${w.slug}/users/1 HTTP/2.0\r\nHost: x\r\n\r\n`,
      'bare LF line ends': `GET /${w.slug}/users/1 HTTP/1.1\nHost: x\n\n`,
      'obs-fold': `GET /${w.slug}/users/1 HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  2\r\n\r\n`,
      'HTTP/1.0 without Host': `GET /${w.slug}/users/1 HTTP/1.0\r\n\r\n`,
      'HTTP/1.1 without Host': `GET /${w.slug}/users/1 HTTP/1.1\r\n\r\n`,
    };
    const native = await nativeServer();
    const seen = w.upstream.seen.length;
    const results = await Promise.all(Object.values(cases).map((bytes) => raw(bytes, 16_000)));
    const got = Object.fromEntries(Object.keys(cases).map((name, i) => [name, results[i]!]));
    for (const [name, r] of Object.entries(got)) {
      expectNoAnswerOr4xx(r, native, name);
      expect(r.closedAfter, name).not.toBeNull();
      // uWS 20.30 holds these until its idle timeout; a server that can decide sooner closes within a second.
      if (native) expect(r.closedAfter!, name).toBeGreaterThan(1000);
      expect(r.closedAfter!, name).toBeLessThan(native ? 15_000 : 1000);
    }
    expect(w.upstream.seen.length).toBe(seen);
  }, 30_000);

  it(`${MAX_HEADER_LINES} header lines are fine`, async () => {
    const c = await paidOrg();
    const many = Array.from({ length: MAX_HEADER_LINES - 3 }, (_, i) => `X-A${i}: 1\r\n`).join('');
    const r = await raw(
      `GET /${w.slug}/users/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\nConnection: close\r\n${many}\r\n`,
    );
    expect(r.text.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  });
});

describe('a method uWS routes but the gateway does not relay', () => {
  it('CONNECT: 405 method_not_allowed with Allow, closed, nothing forwarded', async () => {
    const c = await paidOrg();
    const seen = w.upstream.seen.length;
    const r = await raw(`CONNECT /${w.slug}/users/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\n\r\n`);
    const a = answerOf(r.text);
    expect(a.status).toBe(405);
    expect(a.body.code).toBe('method_not_allowed');
    expect(a.head).toContain('allow: get, head, post, put, patch, delete, options, trace');
    expect(r.closedAfter).not.toBeNull();
    expect(w.upstream.seen.length).toBe(seen);
    expect(await usageRows(c.orgId)).toBe(0);
  });
});

describe('answer headers', () => {
  it('no answer names the server or its version (no uWebSockets header)', async () => {
    const c = await paidOrg();
    const answers = [
      await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key }),
      await gw(g.url, 'GET', `/${w.slug}/users/1`),
      await gw(g.url, 'GET', '/healthz'),
    ];
    for (const a of answers) {
      expect([...a.headers.keys()].filter((k) => /uwebsockets|^server$|x-powered-by/i.test(k))).toEqual([]);
    }
    const r = await raw(post(c.key, 'Content-Length: +2\r\n', 'ab'));
    expect(r.text.toLowerCase()).not.toContain('uwebsockets');
  });

  it('a 402 carries X-Svc-Request-Id, X-Svc-Price-Cents and X-Svc-Charged-Cents: 0; a 401 the id and 0', async () => {
    const broke = await seedOrg(w.h);
    const r = await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: broke.key });
    expect(r.status).toBe(402);
    expect(r.headers.get('x-svc-request-id')).toBe(r.json?.request_id);
    expect(r.headers.get('x-svc-price-cents')).toBe('3');
    expect(r.headers.get('x-svc-charged-cents')).toBe('0');
    const capped = await gw(g.url, 'GET', `/${w.slug}/users/1`, {
      key: broke.key,
      headers: { 'x-svc-max-price-cents': '1' },
    });
    expect(capped.status).toBe(402);
    expect(capped.headers.get('x-svc-price-cents')).toBe('3');
    expect(capped.headers.get('x-svc-charged-cents')).toBe('0');
    const anon = await gw(g.url, 'GET', `/${w.slug}/users/1`);
    expect(anon.status).toBe(401);
    expect(anon.headers.get('x-svc-request-id')).toMatch(/^req_/);
    expect(anon.headers.get('x-svc-charged-cents')).toBe('0');
  });
});
