/**
 * HAProxy as the "auth and rate limit done by the best" peer (issue 14, item 4): the config a user would write for
 * an API gateway in front of one upstream. The key (`Authorization: Bearer …`) is hashed and looked up in a map of
 * key hashes (401 problem+json when absent), each key is tracked in a stick table and refused with 429 past its
 * per-minute rate, the key is stripped and a request id added, and upstream connections are kept alive and reused.
 * No money: that is the gateway's extra work this peer is the bar for. One thread, in the foreground, so /proc CPU
 * is its own.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startListening } from './nginx.js';
import type { Pinned } from './procs.js';

/** Per-key limit per minute: as lifted as the gateways' (bench/run.ts), so the bench measures the proxy, not the limiter. */
const RATE_PER_MIN = 1_000_000_000;

function _config(dir: string, port: number, upstreamPort: number): string {
  const map = join(dir, 'keys.map');
  return `global
  nbthread 1
  maxconn 4096
  log stdout format raw local0 err

defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  option http-keep-alive
  http-reuse always

frontend api
  bind 127.0.0.1:${port}
  stick-table type string len 64 size 100k expire 60s store http_req_rate(60s)
  unique-id-format %{+X}o\\ %ci%cp%fp%Ts%rt%pid
  unique-id-header X-Request-Id
  http-request set-var(txn.key_hash) req.hdr(authorization),word(2,' '),sha2(256),hex,lower
  http-request return status 401 content-type application/problem+json string '{"type":"about:blank","title":"Unauthorized","status":401,"code":"unauthorized"}' unless { var(txn.key_hash),map(${map}) -m found }
  http-request track-sc0 var(txn.key_hash)
  http-request return status 429 content-type application/problem+json string '{"type":"about:blank","title":"Too Many Requests","status":429,"code":"rate_limited"}' if { sc_http_req_rate(0) gt ${RATE_PER_MIN} }
  http-request set-header X-Org-Id %[var(txn.key_hash),map(${map})]
  http-request del-header authorization
  default_backend upstream

backend upstream
  server stub 127.0.0.1:${upstreamPort}
`;
}

/** Starts HAProxy pinned to `cpus`, accepting `keys` (their SHA-256 in the map, each mapped to an org id). */
export async function startHaproxy(
  bin: string,
  dir: string,
  cpus: string,
  upstreamPort: number,
  keys: { key: string; orgId: string }[],
): Promise<Pinned> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  writeFileSync(
    join(dir, 'keys.map'),
    keys.map((k) => `${createHash('sha256').update(k.key).digest('hex')} ${k.orgId}\n`).join(''),
  );
  const conf = join(dir, 'haproxy.cfg');
  writeFileSync(conf, _config(dir, port, upstreamPort));
  // -db: foreground, no master process.
  return startListening('haproxy', cpus, bin, ['-db', '-f', conf], port);
}
