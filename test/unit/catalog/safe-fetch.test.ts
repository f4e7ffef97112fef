import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { assertFetchableUrl, safeFetch } from '../../../control/catalog/safe-fetch.js';
import { SvcError } from '../../../core/errors.js';
import { expandedSize } from '../../../control/catalog/ref-budget.js';

describe('assertFetchableUrl', () => {
  it.each(['file:///etc/passwd', 'gopher://x', 'ftp://example.com/a', 'not a url', 'http://user:pw@example.com/'])(
    'refuses %s',
    (u) => {
      expect(() => assertFetchableUrl(u, false)).toThrow(/./);
    },
  );
  it('allows loopback in development only', () => {
    expect(assertFetchableUrl('http://127.0.0.1:4010/x', false).port).toBe('4010');
    expect(() => assertFetchableUrl('http://127.0.0.1:4010/x', true)).toThrow(/loopback|private/);
    expect(() => assertFetchableUrl('http://svc.localhost/x', true)).toThrow();
    expect(() => assertFetchableUrl('http://localhost./x', true)).toThrow(/loopback|private/);
    expect(() => assertFetchableUrl('http://[::127.0.0.1]/x', true)).toThrow(/loopback|private/);
  });
  it('lets an operator-allowed private host through in production', () => {
    expect(assertFetchableUrl('http://billing.internal:8080/x', true, ['billing.internal']).port).toBe('8080');
    expect(() => assertFetchableUrl('http://other.internal/x', true, ['billing.internal'])).toThrow();
  });
});

describe('expandedSize', () => {
  it('counts shared refs as expanded and cycles once', () => {
    const doc = { a: { $ref: '#/defs/x' }, b: { $ref: '#/defs/x' }, defs: { x: { p: 1, q: 2 } } };
    expect(expandedSize(doc)).toBe(1 + 3 + 3 + (1 + 3));
    const cyc = { root: { $ref: '#/n' }, n: { child: { $ref: '#/n' } } };
    expect(expandedSize(cyc)).toBeLessThan(10);
  });
  it('stops at the cap for an exponential document', () => {
    const defs: Record<string, unknown> = { L0: { type: 'string' } };
    for (let i = 1; i <= 40; i++) defs[`L${i}`] = { a: { $ref: `#/defs/L${i - 1}` }, b: { $ref: `#/defs/L${i - 1}` } };
    expect(expandedSize({ top: { $ref: '#/defs/L40' }, defs }, 1000)).toBe(1001);
  });
});

/** The importer's fetch: every hop checked at connect time, the names resolved by a test resolver (all loopback). */
describe('safeFetch egress and redirects', () => {
  let server: Server;
  let port = 0;
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.headers.host} ${req.url} auth=${req.headers.authorization ?? '-'}`);
      const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
      if (to) {
        res.writeHead(302, { location: to.replace('PORT', String(port)) });
        return res.end();
      }
      res.end('{"openapi":"3.0.0"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const loopback: LookupFunction = (_h, o, cb) =>
    o.all
      ? (cb as unknown as (e: null, l: object[]) => void)(null, [{ address: '127.0.0.1', family: 4 }])
      : cb(null, '127.0.0.1', 4);
  const codeOf = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: unknown) => (e instanceof SvcError ? e.code : String(e)),
    );

  it('refuses a name that resolves to loopback (connect time), reaching nothing', async () => {
    seen.length = 0;
    const r = safeFetch(`http://docs.example.test:${port}/doc.json`, { production: true, lookup: loopback });
    expect(await codeOf(r)).toBe('url_not_allowed');
    expect(seen).toEqual([]);
  });

  it.each([
    ['a loopback IP literal', 'http://127.0.0.1:PORT/secret'],
    ['a loopback IPv6-compatible literal', 'http://[::127.0.0.1]:PORT/secret'],
    ['a name that resolves to loopback', 'http://inner.example.test:PORT/secret'],
  ])('checks every redirect hop: a redirect to %s is refused', async (_n, to) => {
    seen.length = 0;
    const r = safeFetch(`http://docs.example.test:${port}/doc.json?to=${encodeURIComponent(to)}`, {
      production: true,
      egressAllow: ['docs.example.test'],
      lookup: loopback,
    });
    expect(await codeOf(r)).toBe('url_not_allowed');
    expect(seen.filter((l) => l.includes('/secret'))).toEqual([]);
  });

  it('follows an allowed redirect, dropping credentials across origins; verify (maxRedirects 0) follows none', async () => {
    seen.length = 0;
    const egress = { production: true, egressAllow: ['docs.example.test', 'mirror.example.test'] };
    const to = encodeURIComponent('http://mirror.example.test:PORT/final.json');
    const r = await safeFetch(`http://docs.example.test:${port}/doc.json?to=${to}`, {
      ...egress,
      lookup: loopback,
      headers: { authorization: 'Bearer s3cret' },
    });
    expect(r.status).toBe(200);
    expect(seen).toEqual([
      `docs.example.test:${port} /doc.json?to=${to} auth=Bearer s3cret`,
      `mirror.example.test:${port} /final.json auth=-`,
    ]);
    const v = await safeFetch(`http://docs.example.test:${port}/doc.json?to=${to}`, {
      ...egress,
      lookup: loopback,
      maxRedirects: 0,
    });
    expect(v.status).toBe(302);
    expect(seen).toHaveLength(3);
  });
});
