/**
 * The egress rule: which upstream addresses svc's own HTTP clients (the gateway's upstream pool, the importer and
 * verifier) may connect to. The check runs in the connector (core/http1/connect.ts for the gateway, an undici
 * connector for the control plane), once per new connection, on the address the
 * socket actually dials (IP literals directly, names on every resolved answer), so a DNS answer that changes after
 * a save-time check cannot get around it. Imports nothing from control/ (the gateway uses it). docs/security.md.
 */
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';

const BLOCKED_V4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT shared space
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  BLOCKED_V4.addSubnet(net, bits, 'ipv4');

/** The eight 16-bit words of a valid IPv6 literal (zone id dropped, a dotted IPv4 tail folded in). */
function _ipv6Words(ip: string): number[] {
  let s = ip.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  return [...h, ...Array<string>(fill).fill('0'), ...t].map((x) => Number.parseInt(x, 16));
}

const _v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

function _v6NonPublic(w: number[]): boolean {
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0] = w;
  const zero4 = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0;
  // ::ffff:a.b.c.d (mapped): the IPv4 address is what the socket reaches.
  if (zero4 && w4 === 0 && w5 === 0xffff) return BLOCKED_V4.check(_v4(w6, w7), 'ipv4');
  // 64:ff9b::a.b.c.d (well-known NAT64 prefix): a NAT64 gateway dials the embedded IPv4 address.
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0)
    return BLOCKED_V4.check(_v4(w6, w7), 'ipv4');
  // 2002:aabb:ccdd::/48 (6to4) embeds the IPv4 address a.b.c.d.
  if (w0 === 0x2002) return BLOCKED_V4.check(_v4(w1, w2), 'ipv4');
  // Everything outside global unicast 2000::/3 is refused: ::, ::1, IPv4-compatible ::a.b.c.d, ::ffff:0:a.b.c.d,
  // local-use NAT64 64:ff9b:1::/48, discard 100::/64, unique-local fc00::/7, link-local fe80::/10, multicast ff00::/8.
  if ((w0 & 0xe000) !== 0x2000) return true;
  if (w0 === 0x2001) {
    if (w1 === 0) return true; // Teredo 2001::/32 tunnels to an address we cannot check
    if (w1 === 0x0db8) return true; // documentation
    if (w1 === 2 && w2 === 0) return true; // benchmarking 2001:2::/48
    if ((w1 & 0xfff0) === 0x10 || (w1 & 0xfff0) === 0x20) return true; // ORCHID 2001:10::/28, 2001:20::/28
  }
  if (w0 === 0x3fff && (w1 & 0xf000) === 0) return true; // documentation 3fff::/20
  return false;
}

/** True when an IP literal is not a public unicast address; anything that is not an IP literal counts as non-public. */
export function isNonPublicAddress(ip: string): boolean {
  const fam = isIP(ip);
  if (fam === 4) return BLOCKED_V4.check(ip, 'ipv4');
  if (fam === 6) return _v6NonPublic(_ipv6Words(ip));
  return true;
}

/** A host as the allow list compares it: lower case, no IPv6 brackets, no trailing dots (`api.internal.` = `api.internal`). */
export function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '');
}

export interface EgressPolicy {
  /** On in production: only public addresses, except the allowed hosts. Off in development (loopback upstreams). */
  guard: boolean;
  /** Allowed although private: `host` (any port) or `host port` entries (`SVC_EGRESS_ALLOW`, the demo upstream). */
  allow: ReadonlySet<string>;
}

/** An allow-list entry as stored: `api.internal`, `api.internal:8443` → `api.internal 8443`, `[fd00::5]:80` → `fd00::5 80`. */
function _allowEntry(raw: string): string {
  const e = raw.trim();
  const v6 = /^\[([^\]]+)\]:(\d+)$/.exec(e);
  if (v6) return `${normalizeHost(v6[1]!)} ${v6[2]}`;
  const named = /^([^:]+):(\d+)$/.exec(e);
  if (named) return `${normalizeHost(named[1]!)} ${named[2]}`;
  return normalizeHost(e);
}

/**
 * The policy of a process's config: guard on in production, `SVC_EGRESS_ALLOW` entries let through, and with the
 * demo on, its loopback upstream (that one port only), which the operator started on this machine.
 */
export function egressPolicy(config: {
  isProduction: boolean;
  egressAllow: readonly string[];
  demo?: boolean;
  ports?: { demoUpstream: number };
}): EgressPolicy {
  const allow = new Set(config.egressAllow.map(_allowEntry).filter(Boolean));
  if (config.demo && config.ports) allow.add(`127.0.0.1 ${config.ports.demoUpstream}`);
  return { guard: config.isProduction, allow };
}

/** True when the policy lets this host (and port, when known) through without looking at its addresses. */
export function isAllowedHost(policy: EgressPolicy, host: string, port?: string): boolean {
  if (!policy.guard) return true;
  const h = normalizeHost(host);
  return policy.allow.has(h) || (port !== undefined && policy.allow.has(`${h} ${port}`));
}

/** The error a refused connection fails with (`code` EEGRESS); it never names the resolved address to the caller. */
export class EgressRefusedError extends Error {
  readonly code = 'EEGRESS';
  constructor(readonly host: string) {
    super(`${host} is not a public address (egress rule, docs/security.md)`);
    this.name = 'EgressRefusedError';
  }
}

export function isEgressRefusal(e: unknown): boolean {
  for (let x = e as { code?: unknown; cause?: unknown } | undefined, i = 0; x && i < 4; x = x.cause as typeof x, i++)
    if (x.code === 'EEGRESS') return true;
  return false;
}

type Address = { address: string; family: number };

/** Wraps a lookup so that a name with any non-public answer fails with EgressRefusedError instead of connecting. */
export function publicOnlyLookup(base: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = (Array.isArray(addresses) ? addresses : []) as Address[];
      if (list.length === 0 || list.some((a) => isNonPublicAddress(a.address)))
        return callback(new EgressRefusedError(hostname), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: Address[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

export interface EgressConnectOptions {
  policy: EgressPolicy;
  /** Connect timeout, ms. */
  timeout: number;
  /** Name resolution (default dns.lookup); tests inject a resolver that maps a name to loopback. */
  lookup?: LookupFunction;
}

/**
 * An undici `connect` function applying the egress rule to every new connection: IP literals (which skip DNS) are
 * checked here, names through the public-only lookup. Reused keep-alive connections never come back here.
 */
export function egressConnector(opts: EgressConnectOptions): buildConnector.connector {
  const base = opts.lookup ?? (dnsLookup as LookupFunction);
  const open = buildConnector({ timeout: opts.timeout, lookup: base });
  const guarded = buildConnector({ timeout: opts.timeout, lookup: publicOnlyLookup(base) });
  return (o, callback) => {
    const host = normalizeHost(o.hostname);
    const port = o.port || (o.protocol === 'https:' ? '443' : '80');
    if (isAllowedHost(opts.policy, host, port)) return open(o, callback);
    if (isIP(host)) return isNonPublicAddress(host) ? callback(new EgressRefusedError(host), null) : open(o, callback);
    return guarded(o, callback);
  };
}
