/**
 * Opens one upstream connection under the egress rule (core/egress.ts), as the undici connector did: allowed hosts
 * dial as named, IP literals are checked here, names resolve through the public-only lookup, and the socket dials the
 * address that lookup approved (no second resolution). https origins get TLS with SNI and Node's CA store.
 */
import { connect as netConnect, isIP, type LookupFunction, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { lookup as dnsLookup } from 'node:dns';
import {
  EgressRefusedError,
  isAllowedHost,
  isNonPublicAddress,
  normalizeHost,
  publicOnlyLookup,
  type EgressPolicy,
} from '../egress.js';

export interface UpstreamOrigin {
  tls: boolean;
  /** Without IPv6 brackets. */
  hostname: string;
  port: number;
  /** The Host header: host and, when not the scheme's default, port. */
  hostHeader: string;
}

export function parseOrigin(origin: string): UpstreamOrigin {
  const u = new URL(origin);
  const tls = u.protocol === 'https:';
  return {
    tls,
    hostname: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : tls ? 443 : 80,
    hostHeader: u.host,
  };
}

export interface Connector {
  /** A connecting socket, or the egress refusal (nothing dialled). */
  (origin: UpstreamOrigin): Socket | EgressRefusedError;
}

export function egressSocketConnector(policy: EgressPolicy, lookup?: LookupFunction): Connector {
  const base = lookup ?? (dnsLookup as LookupFunction);
  const guarded = publicOnlyLookup(base);
  return (o) => {
    const host = normalizeHost(o.hostname);
    let look = base;
    if (!isAllowedHost(policy, host, String(o.port))) {
      if (isIP(host)) {
        if (isNonPublicAddress(host)) return new EgressRefusedError(host);
      } else look = guarded;
    }
    const socket = o.tls
      ? tlsConnect({
          host: o.hostname,
          port: o.port,
          lookup: look,
          ...(isIP(o.hostname) ? {} : { servername: o.hostname }),
          ALPNProtocols: ['http/1.1'],
        })
      : netConnect({ host: o.hostname, port: o.port, lookup: look });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    return socket;
  };
}
