/**
 * Outbound HTTP for imports and upstream verification under the egress rule (core/egress.ts): checked at save time
 * for a clear `url_not_allowed`, and again at connect time (the real check) on every redirect hop, since a redirect
 * to an IP literal never reaches a DNS-time check. Development lets loopback and private upstreams through.
 */
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { Agent, fetch } from 'undici';
import { SvcError } from '../../core/errors.js';
import {
  egressConnector,
  egressPolicy,
  isAllowedHost,
  isEgressRefusal,
  isNonPublicAddress,
  normalizeHost,
  type EgressPolicy,
} from '../../core/egress.js';

const CONNECT_TIMEOUT_MS = 5_000;
/** Import sources may sit behind a redirect or two (raw file hosts, moved docs); more than this is refused. */
export const MAX_REDIRECTS = 5;

/** One keep-alive pool per policy (a process has one; tests may build more). */
const agents = new Map<string, Agent>();
function _agentFor(policy: EgressPolicy, lookup: LookupFunction | undefined): Agent {
  if (lookup) return new Agent({ connect: egressConnector({ policy, timeout: CONNECT_TIMEOUT_MS, lookup }) });
  const key = `${policy.guard}|${[...policy.allow].sort().join(',')}`;
  let a = agents.get(key);
  if (!a) {
    a = new Agent({ connect: egressConnector({ policy, timeout: CONNECT_TIMEOUT_MS }) });
    agents.set(key, a);
  }
  return a;
}

export interface SafeFetchOptions {
  /** Production turns the egress guard on (core/egress.ts). */
  production: boolean;
  /** Hosts the guard lets through although private (`SVC_EGRESS_ALLOW`). */
  egressAllow?: readonly string[];
  /** Redirects followed, each hop checked again (default MAX_REDIRECTS; 0 returns the 3xx itself). */
  maxRedirects?: number;
  /** Name resolution for the connect-time check (tests map a name to loopback). */
  lookup?: LookupFunction;
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

/**
 * The save-time check: throws `url_not_allowed` for a non-HTTP(S) URL, embedded credentials, or (egress guard on)
 * a non-public IP literal or a local-only name. Names that resolve privately are caught at connect time.
 */
export function assertFetchableUrl(raw: string, production: boolean, egressAllow: readonly string[] = []): URL {
  return _assertFetchable(raw, egressPolicy({ isProduction: production, egressAllow }));
}

function _assertFetchable(raw: string, egress: EgressPolicy): URL {
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
  const host = normalizeHost(url.hostname);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  if (
    !isAllowedHost(egress, host, port) &&
    (isIP(host) ? isNonPublicAddress(host) : /^(localhost|.*\.localhost|.*\.local|.*\.internal)$/i.test(host))
  ) {
    throw new SvcError(
      'url_not_allowed',
      `${host} is a private, loopback or link-local address (refused in production)`,
    );
  }
  return url;
}

function _isStaleConnectionReset(e: unknown): boolean {
  const code = (e as { cause?: { code?: string } }).cause?.code;
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET';
}

export async function safeFetch(raw: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const egress = egressPolicy({ isProduction: opts.production, egressAllow: opts.egressAllow ?? [] });
  let url = _assertFetchable(raw, egress);
  const maxBytes = opts.maxBytes ?? 2 * 1024 * 1024;
  const maxRedirects = opts.maxRedirects ?? MAX_REDIRECTS;
  const dispatcher = _agentFor(egress, opts.lookup);
  const signal = AbortSignal.timeout(opts.timeoutMs ?? 10_000);
  const started = performance.now();
  let res: Response;
  const method = opts.method ?? 'GET';
  const request = (target: URL) =>
    fetch(target, { method, headers: opts.headers, body: opts.body, redirect: 'manual', dispatcher, signal });
  for (let hop = 0; ; hop++) {
    try {
      try {
        res = await request(url);
      } catch (e) {
        // A kept-alive connection the server closed while idle (its keep-alive timeout racing our reuse) fails
        // before any byte of an answer: a GET or HEAD is safe to send once more, on a fresh connection.
        if (!(method === 'GET' || method === 'HEAD') || !_isStaleConnectionReset(e)) throw e;
        res = await request(url);
      }
    } catch (e) {
      const cause = (e as { cause?: NodeJS.ErrnoException }).cause;
      if (isEgressRefusal(e))
        throw new SvcError(
          'url_not_allowed',
          `${url.hostname} is not a public address (refused by the egress rule, docs/security.md)`,
        );
      if ((e as Error).name === 'TimeoutError')
        throw new SvcError('upstream_timeout', `${url.host} did not answer in time`);
      throw new SvcError('upstream_error', `Could not reach ${url.host}: ${cause?.code ?? (e as Error).message}`);
    }
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (location === null || maxRedirects === 0) break;
    await res.body?.cancel();
    if (hop >= maxRedirects)
      throw new SvcError('upstream_error', `${url.host} redirected more than ${maxRedirects} times`);
    const next = _assertFetchable(new URL(location, url).toString(), egress);
    // Like a browser: credentials set for one origin never follow a redirect to another; 303 (and 301/302 after a
    // POST) continue as a GET without the body.
    if (next.origin !== url.origin && opts.headers) opts = { ...opts, headers: _withoutCredentials(opts.headers) };
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && opts.method === 'POST'))
      opts = { ...opts, method: 'GET', body: undefined };
    url = next;
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

function _withoutCredentials(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (!/^(authorization|cookie|proxy-authorization)$/i.test(k)) out[k] = v;
  return out;
}
