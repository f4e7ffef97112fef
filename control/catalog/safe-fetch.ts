/**
 * Outbound HTTP for imports and upstream verification, with the SSRF rule: in production every address a host
 * resolves to (including after redirects) must be public; development allows loopback/private so local upstreams work.
 */
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, fetch } from 'undici';
import { SvcError } from '../../core/errors.js';

const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
  ['100::', 64],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv6');

/** True when an IP literal is not a public unicast address (private, loopback, link-local, reserved...). */
export function isNonPublicAddress(ip: string): boolean {
  const fam = isIP(ip);
  if (fam === 4) return BLOCKED.check(ip, 'ipv4');
  if (fam === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (mapped) return BLOCKED.check(mapped[1]!, 'ipv4');
    return BLOCKED.check(ip, 'ipv6');
  }
  return true;
}

/** A dns lookup that refuses non-public answers: runs at connect time, so a rebinding DNS cannot slip past. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as unknown as { address: string; family: number }[];
    const bad = list.find((a) => isNonPublicAddress(a.address));
    if (bad || list.length === 0) {
      const e = new Error(`${hostname} resolves to a non-public address`) as NodeJS.ErrnoException;
      e.code = 'ENOTPUBLIC';
      return callback(e, '', 0);
    }
    if ((options as { all?: boolean }).all)
      return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};

const productionAgent = new Agent({ connect: { lookup: publicOnlyLookup, timeout: 5_000 } });
const developmentAgent = new Agent({ connect: { timeout: 5_000 } });

export interface SafeFetchOptions {
  production: boolean;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  maxBytes?: number;
}

export interface SafeFetchResult {
  status: number;
  contentType: string;
  text: string;
  latencyMs: number;
}

/** Throws `url_not_allowed` for a non-HTTP(S) URL or an address refused by the SSRF rule; network faults as `upstream_error`. */
export function assertFetchableUrl(raw: string, production: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SvcError('url_not_allowed', `Not a valid absolute URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SvcError('url_not_allowed', `Only http and https URLs are allowed, got ${url.protocol}`);
  }
  if (url.username || url.password)
    throw new SvcError('url_not_allowed', 'URLs with embedded credentials are not allowed');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (
    production &&
    (isIP(host) ? isNonPublicAddress(host) : /^(localhost|.*\.localhost|.*\.local|.*\.internal)$/i.test(host))
  ) {
    throw new SvcError(
      'url_not_allowed',
      `${host} is a private, loopback or link-local address (refused in production)`,
    );
  }
  return url;
}

export async function safeFetch(raw: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const url = assertFetchableUrl(raw, opts.production);
  const maxBytes = opts.maxBytes ?? 2 * 1024 * 1024;
  const started = performance.now();
  let res;
  try {
    res = await fetch(url, {
      method: opts.method ?? 'GET',
      headers: opts.headers,
      body: opts.body,
      redirect: 'follow',
      dispatcher: opts.production ? productionAgent : developmentAgent,
      signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
    });
  } catch (e) {
    const cause = (e as { cause?: NodeJS.ErrnoException }).cause;
    if (cause?.code === 'ENOTPUBLIC')
      throw new SvcError('url_not_allowed', `${url.hostname} resolves to a non-public address (refused in production)`);
    if ((e as Error).name === 'TimeoutError')
      throw new SvcError('upstream_timeout', `${url.host} did not answer in time`);
    throw new SvcError('upstream_error', `Could not reach ${url.host}: ${cause?.code ?? (e as Error).message}`);
  }
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw new SvcError('payload_too_large', `Response from ${url.host} is over ${maxBytes} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body) {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes)
        throw new SvcError('payload_too_large', `Response from ${url.host} is over ${maxBytes} bytes`);
      chunks.push(chunk);
    }
  }
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    text: Buffer.concat(chunks).toString('utf8'),
    latencyMs: Math.round(performance.now() - started),
  };
}
