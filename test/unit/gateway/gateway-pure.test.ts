import { describe, expect, it } from 'vitest';
import { matchEndpoint, type Listing, type EndpointRec } from '../../../gateway/cache/listing-cache.js';
import { splitSlug } from '../../../gateway/pipeline.js';
import { upstreamHeaders, upstreamPath } from '../../../gateway/steps/forward.js';
import { KeyRateLimiter } from '../../../gateway/rate-limiter.js';
import { monthStartOf } from '../../../gateway/steps/checks.js';

function ep(method: string, path: string, id = path): EndpointRec {
  const segments = path
    .split('/')
    .slice(1)
    .map((s) => (/^\{[^}]+\}$/.test(s) ? null : s));
  return { id, method, segments, literals: segments.filter((s) => s !== null).length, priceCents: 1, tiers: [] };
}

function listing(endpoints: EndpointRec[], extra: Partial<Listing> = {}): Listing {
  return {
    apiId: 'api_1',
    slug: 's',
    providerOrgId: 'org_p',
    origin: 'http://u',
    basePath: '',
    injection: 'none',
    injectionName: null,
    secret: null,
    endpoints: [...endpoints].sort((a, b) => b.literals - a.literals),
    requiredTermsDocId: null,
    ...extra,
  };
}

describe('matchEndpoint', () => {
  const l = listing([
    ep('GET', '/users/{id}'),
    ep('GET', '/users/me'),
    ep('POST', '/users'),
    ep('GET', '/a/{x}/b/{y}'),
  ]);
  it.each([
    ['GET', '/users/7', '/users/{id}'],
    ['GET', '/users/me', '/users/me'],
    ['POST', '/users', '/users'],
    ['HEAD', '/users/7', '/users/{id}'],
    ['GET', '/a/1/b/2', '/a/{x}/b/{y}'],
    ['GET', '/users/', undefined],
    ['GET', '/users/7/x', undefined],
    ['DELETE', '/users/7', undefined],
    ['GET', '/a/1/c/2', undefined],
  ])('%s %s -> %s', (method, path, want) => {
    expect(matchEndpoint(l, method, path)?.id).toBe(want);
  });
});

describe('matchEndpoint on a listing past the in-order scan (its route index)', () => {
  /** The rule the index must keep: the first template in listing order (most literals, then position) that fits. */
  function reference(l: Listing, method: string, path: string): EndpointRec | undefined {
    const parts = path.split('/').slice(1);
    const find = (m: string) =>
      l.endpoints.find(
        (e) =>
          e.method === m &&
          e.segments.length === parts.length &&
          e.segments.every((seg, i) => (seg === null ? parts[i] !== '' : seg === parts[i])),
      );
    return find(method) ?? (method === 'HEAD' ? find('GET') : undefined);
  }

  it('picks what an in-order scan picks, for random templates and paths', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return seed % n;
    };
    const words = ['a', 'b', 'users', 'me', '7'];
    const methods = ['GET', 'POST', 'HEAD'];
    for (let round = 0; round < 40; round++) {
      const eps: EndpointRec[] = [];
      for (let i = 0; i < 9 + rnd(40); i++) {
        const segs = Array.from({ length: 1 + rnd(3) }, () =>
          rnd(3) === 0 ? `{p${rnd(2)}}` : words[rnd(words.length)],
        );
        eps.push(ep(methods[rnd(2)]!, `/${segs.join('/')}`, `e${i}`));
      }
      const l = listing(eps);
      for (let q = 0; q < 60; q++) {
        const path = `/${Array.from({ length: 1 + rnd(3) }, () => (rnd(6) === 0 ? '' : words[rnd(words.length)])).join('/')}`;
        const method = methods[rnd(3)]!;
        expect(matchEndpoint(l, method, path)?.id, `${method} ${path}`).toBe(reference(l, method, path)?.id);
      }
    }
  });

  it('lets a template that starts with a parameter win by its rank over a later literal-first one', () => {
    const filler = Array.from({ length: 10 }, (_, i) => ep('GET', `/f${i}/x`));
    const l = listing([
      ep('GET', '/{org}/repos', 'param-first'),
      ep('GET', '/acme/{repo}', 'literal-first'),
      ...filler,
    ]);
    expect(matchEndpoint(l, 'GET', '/acme/repos')?.id).toBe('param-first');
    expect(matchEndpoint(l, 'HEAD', '/acme/x')?.id).toBe('literal-first');
    expect(matchEndpoint(l, 'GET', '/f3/x')?.id).toBe('/f3/x');
    expect(matchEndpoint(l, 'DELETE', '/f3/x')).toBeUndefined();
  });
});

describe('splitSlug', () => {
  it.each([
    ['/weather/forecast/7', 'weather', '/forecast/7'],
    ['/weather', 'weather', '/'],
    ['/', '', '/'],
  ])('%s', (url, slug, path) => expect(splitSlug(url)).toEqual({ slug, path }));
});

describe('upstream request hygiene', () => {
  const req = {
    method: 'GET',
    path: '/x',
    query: 'a=1',
    requestId: 'req_1',
    body: null,
    headers: [
      ['authorization', 'Bearer svc_live_consumer'],
      ['cookie', 'sid=1'],
      ['x-svc-key', 'k'],
      ['x-svc-max-price-cents', '3'],
      ['connection', 'keep-alive'],
      ['accept', 'application/json'],
      ['idempotency-key', 'i'],
    ] as [string, string][],
  };
  it('drops the consumer key, cookies, hop-by-hop and x-svc-* headers', () => {
    const h = upstreamHeaders(listing([]), req);
    expect(h).toEqual({ accept: 'application/json', 'x-svc-request-id': 'req_1' });
  });
  it('drops headers named in Connection', () => {
    const h = upstreamHeaders(listing([]), {
      ...req,
      headers: [
        ['connection', 'close, X-Private'],
        ['x-private', '1'],
        ['x-kept', '2'],
      ],
    });
    expect(h).toEqual({ 'x-kept': '2', 'x-svc-request-id': 'req_1' });
  });
  it.each([
    ['bearer', null, { authorization: 'Bearer s3cret' }, '/x?a=1'],
    ['header', 'X-Api-Key', { 'x-api-key': 's3cret' }, '/x?a=1'],
    ['query', 'api_key', {}, '/x?a=1&api_key=s3cret'],
  ] as const)('injects the secret as %s', (injection, injectionName, headers, path) => {
    const l = listing([], { injection, injectionName, secret: 's3cret', basePath: '' });
    expect(upstreamHeaders(l, req)).toMatchObject(headers);
    expect(upstreamPath(l, req)).toBe(path);
  });
  it('prefixes the base URL path', () => {
    expect(upstreamPath(listing([], { basePath: '/v2' }), { ...req, query: '' })).toBe('/v2/x');
  });
});

describe('KeyRateLimiter', () => {
  it('splits the per-minute limit across workers and tells when to retry', () => {
    const rl = new KeyRateLimiter(2);
    expect(rl.take('k', 4, 0)).toBe(0);
    expect(rl.take('k', 4, 1)).toBe(0);
    expect(rl.take('k', 4, 2)).toBe(60);
    expect(rl.take('k', 4, 60_000)).toBe(0);
  });
});

describe('monthStartOf', () => {
  // It remembers the last month it answered; an answer must not leak into a neighbouring month, in either direction.
  it('answers the first UTC millisecond of the month, across month and year edges, forwards and backwards', () => {
    const cases: [string, string][] = [
      ['2026-11-27T20:00:00.000Z', '2026-11-01T00:00:00.000Z'],
      ['2026-11-30T23:59:59.999Z', '2026-11-01T00:00:00.000Z'],
      ['2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
      ['2026-12-31T23:59:59.999Z', '2026-12-01T00:00:00.000Z'],
      ['2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
      ['2026-12-15T12:00:00.000Z', '2026-12-01T00:00:00.000Z'],
      ['2026-10-31T23:59:59.999Z', '2026-10-01T00:00:00.000Z'],
      ['2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z'],
      ['2024-02-29T12:00:00.000Z', '2024-02-01T00:00:00.000Z'],
      ['2024-03-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z'],
    ];
    for (const [at, start] of cases) expect(new Date(monthStartOf(Date.parse(at))).toISOString(), at).toBe(start);
  });
});
