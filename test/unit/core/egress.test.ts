import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import {
  egressConnector,
  egressPolicy,
  isAllowedHost,
  isEgressRefusal,
  isNonPublicAddress,
  normalizeHost,
  type EgressPolicy,
} from '../../../core/egress.js';
import { createUpstreamPool } from '../../../gateway/steps/forward.js';
import type { UpstreamPool } from '../../../core/http1/pool.js';
import { callVia } from '../../helpers/upstream-pool.js';

describe('isNonPublicAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['10.0.0.8', true],
    ['172.16.5.4', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['100.127.255.254', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['192.0.2.7', true],
    ['198.18.0.1', true],
    ['203.0.113.9', true],
    ['8.8.8.8', false],
    ['1.1.1.1', false],
    ['::1', true],
    ['::', true],
    ['::7f00:1', true], // [::127.0.0.1], IPv4-compatible
    ['::127.0.0.1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:0:7f00:1', true], // SIIT form
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::7f00:1', true], // NAT64 to loopback
    ['64:ff9b::808:808', false], // NAT64 to 8.8.8.8
    ['64:ff9b:1::1', true], // local-use NAT64
    ['2002:7f00:1::1', true], // 6to4 of 127.0.0.1
    ['2002:808:808::1', false],
    ['2001::1', true], // Teredo
    ['2001:db8::1', true],
    ['3fff::1', true],
    ['fe80::1', true],
    ['fe80::1%eth0', true],
    ['fec0::1', true],
    ['fd00::1', true],
    ['ff02::1', true],
    ['100::1', true],
    ['2606:4700::1111', false],
    ['2a00:1450:4001:80b::200e', false],
    ['not-an-ip', true],
  ])('%s -> %s', (ip, expected) => {
    expect(isNonPublicAddress(ip)).toBe(expected);
  });
});

describe('egressPolicy', () => {
  it('guards in production only and normalises allowed hosts', () => {
    expect(egressPolicy({ isProduction: false, egressAllow: [] }).guard).toBe(false);
    const p = egressPolicy({ isProduction: true, egressAllow: ['Billing.Internal.', '[fd00::5]', ' '] });
    expect(p.guard).toBe(true);
    expect([...p.allow]).toEqual(['billing.internal', 'fd00::5']);
    expect(normalizeHost('LOCALHOST..')).toBe('localhost');
  });

  it('takes host:port entries, and lets the demo upstream (its port only) through when the demo is on', () => {
    const p = egressPolicy({
      isProduction: true,
      egressAllow: ['api.internal:8443', '[fd00::5]:80'],
      demo: true,
      ports: { demoUpstream: 4010 },
    });
    expect([...p.allow]).toEqual(['api.internal 8443', 'fd00::5 80', '127.0.0.1 4010']);
    expect(isAllowedHost(p, '127.0.0.1', '4010')).toBe(true);
    expect(isAllowedHost(p, '127.0.0.1', '4011')).toBe(false);
    expect(isAllowedHost(p, 'API.internal.', '8443')).toBe(true);
    expect(isAllowedHost(p, 'api.internal', '443')).toBe(false);
    expect(
      isAllowedHost(egressPolicy({ ...p, isProduction: true, egressAllow: [], demo: false }), '127.0.0.1', '4010'),
    ).toBe(false);
  });
});

let server: Server;
let port = 0;
let served = 0;
const sockets = new Set<unknown>();
beforeAll(async () => {
  server = createServer((_req, res) => {
    served++;
    res.end('internal secret');
  });
  server.on('connection', (s) => sockets.add(s));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** A test resolver: every name is 127.0.0.1 (what a hosts-file entry or a rebinding DNS would answer). */
function loopbackResolver(counter?: { n: number }): LookupFunction {
  return (_host, options, cb) => {
    if (counter) counter.n++;
    const a = { address: '127.0.0.1', family: 4 };
    if (options.all) (cb as unknown as (e: null, l: (typeof a)[]) => void)(null, [a]);
    else cb(null, a.address, a.family);
  };
}

const production = (allow: string[] = []): EgressPolicy => egressPolicy({ isProduction: true, egressAllow: allow });

function agentFor(policy: EgressPolicy, lookup?: LookupFunction): UpstreamPool {
  return createUpstreamPool({
    connections: 1,
    connectTimeoutMs: 2_000,
    headersTimeoutMs: 2_000,
    bodyTimeoutMs: 2_000,
    egress: policy,
    ...(lookup ? { lookup } : {}),
  });
}

async function get(
  agent: Agent | UpstreamPool,
  origin: string,
): Promise<{ status: number } | { refused: boolean; error: Error }> {
  try {
    if (!(agent instanceof Agent)) return { status: (await callVia(agent, origin)).status };
    const r = await request(`${origin}/`, { dispatcher: agent });
    await r.body.text();
    return { status: r.statusCode };
  } catch (e) {
    return { refused: isEgressRefusal(e), error: e as Error };
  }
}

describe('the gateway upstream pool refuses non-public upstreams at connect time', () => {
  it('refuses a name that resolves to loopback, and reaches nothing', async () => {
    const before = served;
    const agent = agentFor(production(), loopbackResolver());
    expect(await get(agent, `http://upstream.example.test:${port}`)).toMatchObject({ refused: true });
    expect(served).toBe(before);
    await agent.close();
  });

  it.each([
    ['an IPv4 literal', () => `http://127.0.0.1:${port}`],
    ['another loopback literal', () => `http://127.0.0.2:${port}`],
    ['a mapped IPv6 literal', () => `http://[::ffff:127.0.0.1]:${port}`],
    ['an IPv4-compatible IPv6 literal', () => `http://[::127.0.0.1]:${port}`],
    ['a trailing-dot name', () => `http://localhost.:${port}`],
  ])('refuses %s (IP literals skip DNS, so the connector checks them itself)', async (_n, origin) => {
    const before = served;
    const agent = agentFor(production(), loopbackResolver());
    expect(await get(agent, origin())).toMatchObject({ refused: true });
    expect(served).toBe(before);
    await agent.close();
  });

  it('lets an allowed host:port through, and only on that port', async () => {
    const right = agentFor(production([`127.0.0.1:${port}`]));
    expect(await get(right, `http://127.0.0.1:${port}`)).toEqual({ status: 200 });
    await right.close();
    const before = served;
    const wrong = agentFor(production([`127.0.0.1:${port + 1}`]));
    expect(await get(wrong, `http://127.0.0.1:${port}`)).toMatchObject({ refused: true });
    expect(served).toBe(before);
    await wrong.close();
  });

  it('lets a host named in SVC_EGRESS_ALLOW through, and development through', async () => {
    const allowed = agentFor(production(['upstream.example.test']), loopbackResolver());
    expect(await get(allowed, `http://upstream.example.test:${port}`)).toEqual({ status: 200 });
    await allowed.close();
    const dev = agentFor(egressPolicy({ isProduction: false, egressAllow: [] }));
    expect(await get(dev, `http://127.0.0.1:${port}`)).toEqual({ status: 200 });
    await dev.close();
  });

  it('runs once per new upstream connection, not per call: 50 keep-alive calls, one lookup, one connect', async () => {
    const lookups = { n: 0 };
    let connects = 0;
    const guard = egressConnector({
      policy: production(['upstream.example.test']),
      timeout: 2_000,
      lookup: loopbackResolver(lookups),
    });
    const agent = new Agent({
      connections: 1,
      pipelining: 1,
      connect: (o, cb) => {
        connects++;
        guard(o, cb);
      },
    });
    const pooled = { n: 0 };
    const gatewayPool = agentFor(production(['upstream.example.test']), loopbackResolver(pooled));
    const socketsBefore = sockets.size;
    for (let i = 0; i < 50; i++) {
      expect(await get(agent, `http://upstream.example.test:${port}`)).toEqual({ status: 200 });
      expect(await get(gatewayPool, `http://upstream.example.test:${port}`)).toEqual({ status: 200 });
    }
    expect(connects).toBe(1);
    expect(lookups.n).toBe(1);
    expect(pooled.n).toBe(1);
    expect(sockets.size - socketsBefore).toBe(2);
    await agent.close();
    await gatewayPool.close();
  });
});
