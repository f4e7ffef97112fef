/**
 * The shortcuts a call_api takes on the MCP hot path give what the long way gives (issue 28): the gateway hop's
 * request target without a URL parse, the remembered Host → hostname of the DNS-rebinding check, the request
 * header reader without `headersDistinct`, the answer's structured content JSON reused from `ok`, and call_api's
 * hand-written output check (a subset of its schema).
 */
import { describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { requestTarget } from '../../../core/gateway-calls.js';
import { rebindingRefusal } from '../../../mcp/http-guard.js';
import { answerBytes, headerReader, type FastCall } from '../../../mcp/fast-tool-call.js';
import { fail, ok } from '../../../mcp/result.js';
import { toolError } from '../../../mcp/tool-kit.js';
import {
  CallApiInput,
  CallResult,
  RunProbeInput,
  callArgs,
  callResultAccepts,
  parseCallArgsFast,
} from '../../../mcp/tools/calls.js';

/** What the hop did before: a WHATWG URL parse, each query member appended. */
function viaUrl(base: string, c: { quote?: boolean; slug: string; path: string; query: Record<string, string> }) {
  const url = new URL(`${base}${c.quote ? '/_quote' : ''}/${encodeURIComponent(c.slug)}${c.path}`);
  for (const [k, v] of Object.entries(c.query)) url.searchParams.append(k, v);
  return url.pathname + url.search;
}

describe('gateway hop request target', () => {
  const bases = ['http://127.0.0.1:8081', 'http://gw.example/api', 'http://gw.example/a%20b', 'http://gw.example/x/..'];
  const slugs = ['demo-weather', 'a.b', 'ü ber', 'a/b', '..', '.'];
  const paths = [
    '/current',
    '/',
    '',
    '/users/42',
    '/a/./b',
    '/a/../b',
    '/a/..',
    '/.',
    '/%2e%2E/x',
    '/a b',
    '/a\\b',
    '/a?b=1',
    '/a#frag',
    '//double',
    '/caf\u00e9',
    '/{id}',
    '/x~y_z-1.json',
  ];
  const queries: Record<string, string>[] = [
    {},
    { city: 'lisbon' },
    { q: 'a b&c=d', 'k e y': 'ü', empty: '' },
    { '': '' },
    { plus: '1+1', star: '*', tilde: '~', slash: '/?' },
    { city: 'Lisbon', units: 'metric', n: '-1.5_*', '': 'x', e: '' },
    { '2': 'b', '1': 'a', z: 'Z' },
    { t: 'a~b' },
    { bang: 'x!' },
    { 'a~': 'b' },
    { paren: '(y)', q: "'" },
    { a: 'é', b: 'x y', c: 'a=b', d: '%41', e: '\ud800' },
  ];

  it('equals the URL parse for plain and odd paths, slugs, bases and queries', () => {
    let cases = 0;
    for (const base of bases) {
      const basePath = new URL(`${base}/`).pathname.slice(0, -1);
      for (const slug of slugs)
        for (const path of paths)
          for (const query of queries)
            for (const quote of [false, true]) {
              const c = { quote, slug, path, query };
              expect(requestTarget(base, basePath, c), JSON.stringify({ base, ...c })).toBe(viaUrl(base, c));
              cases++;
            }
    }
    expect(cases).toBe(bases.length * slugs.length * paths.length * queries.length * 2);
  });
});

describe('DNS-rebinding check with remembered hostnames', () => {
  const allowed = new Set(['localhost', '127.0.0.1', 'mcp.example']);

  it('answers the same the second time, refusals included', () => {
    for (let round = 0; round < 2; round++) {
      expect(rebindingRefusal(allowed, '127.0.0.1:8083', undefined)).toBeNull();
      expect(rebindingRefusal(allowed, 'MCP.example', undefined)).toBeNull();
      expect(rebindingRefusal(allowed, 'evil.example', undefined)).toMatch(/is not this server/);
      expect(rebindingRefusal(allowed, '[::1', undefined)).toMatch(/is not this server/);
    }
  });

  it('stays right past the memo bound (a client choosing many Host values)', () => {
    for (let i = 0; i < 600; i++) {
      expect(rebindingRefusal(allowed, `h${i}.evil.example`, undefined)).toMatch(/is not this server/);
      expect(rebindingRefusal(allowed, `localhost:${1000 + i}`, undefined)).toBeNull();
    }
    expect(rebindingRefusal(allowed, 'evil.example', undefined)).toMatch(/is not this server/);
  });
});

describe('request header reader', () => {
  /** The reader's answers for `names`, on a real node:http request sent as these raw header lines. */
  async function readAs(lines: string[], names: string[]): Promise<(string | undefined)[]> {
    let answers: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      const header = headerReader(req);
      answers = names.map((n) => header(n));
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const socket = connect(port, '127.0.0.1');
      socket.write(`GET / HTTP/1.1\r\n${lines.map((l) => `${l}\r\n`).join('')}Connection: close\r\n\r\n`);
      await new Promise((r) => socket.on('close', r).resume());
    } finally {
      server.close();
    }
    return answers;
  }

  it('reads headers sent once as they are', async () => {
    const lines = ['Host: 127.0.0.1:1', 'Authorization: Bearer a', 'Content-Type: application/json', 'X-A: b'];
    expect(await readAs(lines, ['host', 'authorization', 'content-type', 'x-a', 'origin'])).toEqual([
      '127.0.0.1:1',
      'Bearer a',
      'application/json',
      'b',
      undefined,
    ]);
  });

  it('joins every line of a repeated header, the ones node:http keeps only once included', async () => {
    const lines = ['Host: localhost', 'host: evil.example', 'Authorization: Bearer a', 'AUTHORIZATION: Bearer b'];
    expect(
      await readAs([...lines, 'X-A: 1', 'x-a: 2', 'Set-Cookie: c=1'], ['host', 'authorization', 'x-a', 'set-cookie']),
    ).toEqual(['localhost, evil.example', 'Bearer a, Bearer b', '1, 2', 'c=1']);
  });

  it('reads a lone set-cookie line (an array in req.headers) as its text', async () => {
    expect(await readAs(['Host: x', 'Set-Cookie: c=1'], ['set-cookie'])).toEqual(['c=1']);
  });
});

describe('answer bytes', () => {
  const call = (modern: boolean, id: string | number = 7) =>
    ({ id, modern, args: undefined, reg: undefined, era: undefined }) as unknown as FastCall;
  /** The serialization before the reuse: one JSON.stringify of the wire result. */
  const before = (c: FastCall, r: ReturnType<typeof ok>) => {
    const wire: Record<string, unknown> = { content: r.content };
    if (r.structuredContent !== undefined) wire.structuredContent = r.structuredContent;
    if (r.isError !== undefined) wire.isError = r.isError;
    return JSON.parse(`{"result":${JSON.stringify(wire)},"jsonrpc":"2.0","id":${JSON.stringify(c.id)}}`) as unknown;
  };

  it('are the JSON of the wire result for ok, noted, failed and error results, both eras', () => {
    const results = [
      ok({ status: 200, body: '{"t":"\\u00e9"}', headers: { a: 'b' }, n: null, skipped: undefined }),
      ok({ b: 1, a: [1, 2] }, 'HTTP 200 from x; charged 0 cents'),
      fail({ code: 'not_found', detail: 'No such API', next: { tool: 'discover_tools', hint: 'search' } }),
      toolError('Input validation error: x'),
      { content: [], structuredContent: { later: 1 }, isError: false },
    ];
    for (const r of results)
      for (const modern of [false, true])
        for (const id of [7, 'req-"1"']) {
          const c = call(modern, id);
          const parsed = JSON.parse(answerBytes(c, r)) as { result: Record<string, unknown> };
          const expected = before(c, r) as { result: Record<string, unknown> };
          if (modern) {
            expect(parsed.result.resultType).toBe('complete');
            delete parsed.result.resultType;
            delete parsed.result._meta;
          }
          expect(parsed).toEqual(expected);
          // Member order is the wire's: content, structuredContent, isError.
          expect(Object.keys(parsed.result)).toEqual(Object.keys(expected.result));
        }
  });
});

describe("call_api's output check", () => {
  const valid = {
    status: 200,
    headers: { 'content-type': 'application/json', 'x-svc-request-id': 'req_1' },
    body: '{"t":21}',
    body_encoding: 'utf8',
    body_truncated: false,
    price_cents: 0,
    charged_cents: 0,
    balance_cents: 500,
    request_id: 'req_1',
  };
  const odd: unknown[] = [
    undefined,
    null,
    0,
    -0,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    2 ** 53,
    -(2 ** 53),
    '1',
    '',
    true,
    {},
    [],
    'utf8',
    'base64',
    'latin1',
    Object.create(null),
  ];
  const headerVariants = (): unknown[] => {
    const symbolKeyed = { a: 'b', [Symbol('s')]: 'c' };
    const hiddenNumber = { a: 'b' };
    Object.defineProperty(hiddenNumber, 'n', { value: 1, enumerable: false });
    const protoMember = JSON.parse('{"__proto__": 1, "a": "b"}') as unknown;
    const nullProto = Object.assign(Object.create(null) as object, { a: 'b' });
    class Headers {
      a = 'b';
    }
    return [
      {},
      { a: 'b' },
      { a: 1 },
      { a: null },
      ['b'],
      symbolKeyed,
      hiddenNumber,
      protoMember,
      nullProto,
      new Headers(),
      { constructor: 'x' },
      { '1': 'x' },
    ];
  };

  /** Every member replaced in turn by each odd value, removed, and the headers varied. */
  function candidates(): unknown[] {
    const out: unknown[] = [valid, [valid], { ...valid, extra: { deep: [1] } }];
    for (const k of Object.keys(valid)) {
      const { [k]: _dropped, ...without } = valid as Record<string, unknown>;
      out.push(without);
      for (const v of odd) out.push({ ...valid, [k]: v });
    }
    for (const h of headerVariants()) out.push({ ...valid, headers: h });
    return out;
  }

  it('accepts only what the schema accepts', () => {
    let accepted = 0;
    for (const c of candidates()) {
      if (!callResultAccepts(c)) continue;
      accepted++;
      expect(CallResult.safeParse(c).success, JSON.stringify(c)).toBe(true);
    }
    expect(accepted).toBeGreaterThan(10);
  });

  it('accepts what the gateway hop answers, so the fast path skips the parse', () => {
    for (const balance of [500, null])
      for (const encoding of ['utf8', 'base64'])
        expect(
          callResultAccepts({ ...valid, balance_cents: balance, price_cents: balance, body_encoding: encoding }),
        ).toBe(true);
  });
});

describe("call_api's arguments with their method", () => {
  it('are the spread literal member for member, in its order (the idempotency key hashes their JSON)', () => {
    const inputs = [undefined, {}, { city: 'lisbon', n: 1 }];
    for (const method of [undefined, 'POST'])
      for (const input of inputs)
        for (const max of [undefined, 0, 5])
          for (const inputFirst of [false, true]) {
            const a: Record<string, unknown> = inputFirst && input ? { input } : {};
            Object.assign(a, { slug: 's', endpoint: '/e' });
            if (method !== undefined) a.method = method;
            if (input !== undefined) a.input = input;
            if (max !== undefined) a.max_price_cents = max;
            const typed = a as Parameters<typeof callArgs>[0] & { method?: string };
            const spread = {
              ...typed,
              method: typed.method ?? 'GET',
              input: typed.input,
              max_price_cents: typed.max_price_cents,
            };
            const built = callArgs(typed, typed.method ?? 'GET');
            expect(Object.keys(built)).toEqual(Object.keys(spread));
            expect(JSON.stringify(built)).toBe(JSON.stringify(spread));
            expect(built).toStrictEqual(spread);
          }
  });
});

describe("call_api's and run_probe's hand-written argument parse", () => {
  const slugs: unknown[] = [
    'demo-weather',
    '',
    'x',
    'a'.repeat(80),
    'a'.repeat(81),
    '😀'.repeat(40),
    '😀'.repeat(41),
    1,
    null,
  ];
  const endpoints: unknown[] = ['/current', '', 'e'.repeat(500), 'e'.repeat(501), 'ep_1', ['/x']];
  const methods: unknown[] = ['GET', 'POST', 'HEAD', 'get', 'TRACE', '', null, 1];
  const inputs: unknown[] = [
    {},
    { city: 'lisbon' },
    { b: 1, a: { deep: [1, { x: null }] }, '2': 'two', '1': true },
    JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}') as unknown,
    { [Symbol('s')]: 1, a: 1 },
    Object.assign(Object.create(null) as object, { a: 1 }),
    [],
    ['a'],
    null,
    'text',
    1,
  ];
  const maxes: unknown[] = [0, -0, 7, -1, 1.5, 2 ** 53, Number.NaN, '5', null];

  /** Argument objects: each member absent or one of its values, in schema order and reversed, plus odd shapes. */
  function candidates(): unknown[] {
    const out: unknown[] = [undefined, null, [], 'x', {}, { slug: 'demo-weather' }, Object.create(null)];
    const base = { slug: 'demo-weather', endpoint: '/current' };
    out.push({ ...base, extra: 1 }, { endpoint: '/current', slug: 'demo-weather' });
    for (const slug of slugs) out.push({ ...base, slug });
    for (const endpoint of endpoints) out.push({ ...base, endpoint });
    for (const method of methods) out.push({ ...base, method }, { method, ...base });
    for (const input of inputs) out.push({ ...base, input }, { input, ...base, method: 'POST' });
    for (const max of maxes) out.push({ ...base, max_price_cents: max }, { max_price_cents: max, input: {}, ...base });
    out.push({ ...base, method: 'POST', input: { a: 1 }, max_price_cents: 3 });
    out.push({ max_price_cents: 3, input: { a: 1 }, method: 'PUT', endpoint: '/e', slug: 's' });
    return out;
  }

  /** Member order at every level (toStrictEqual does not look at it; the idempotency key's JSON does). */
  const shape = (v: unknown): unknown =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.keys(v).map((k) => [k, shape((v as Record<string, unknown>)[k])])
      : v;

  it('gives exactly what the schema gives, or leaves it to the schema', () => {
    let taken = 0;
    for (const [schema, withMethod] of [
      [CallApiInput, true],
      [RunProbeInput, false],
    ] as const) {
      for (const c of candidates()) {
        const fast = parseCallArgsFast(c, withMethod);
        if (fast === undefined) continue;
        taken++;
        const zod = schema.safeParse(c);
        expect(zod.success, JSON.stringify(c)).toBe(true);
        expect(fast, JSON.stringify(c)).toStrictEqual(zod.data);
        expect(shape(fast)).toEqual(shape(zod.data));
        expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
        // A copy, as the schema's is: the tool may change it without touching the request's own object.
        if (fast.input) expect(fast.input).not.toBe((c as { input: unknown }).input);
      }
    }
    expect(taken).toBeGreaterThan(40);
  });

  it('takes the arguments agents send', () => {
    expect(parseCallArgsFast({ slug: 'demo-weather', endpoint: '/current', input: { city: 'lisbon' } }, true)).toEqual({
      slug: 'demo-weather',
      endpoint: '/current',
      input: { city: 'lisbon' },
    });
    expect(parseCallArgsFast({ slug: 'a', endpoint: '/b', method: 'POST', max_price_cents: 2 }, true)).toBeDefined();
  });
});
