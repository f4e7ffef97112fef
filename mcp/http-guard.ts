/**
 * DNS-rebinding protection: the Host header must name this server (localhost names, or the host of SVC_MCP_URL),
 * and an Origin, when a browser sends one, must too. Anything else is refused before any MCP parsing.
 */
import type { Config } from '../core/config.js';

const LOCAL = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function allowedHostnames(config: Readonly<Config>): ReadonlySet<string> {
  const names = new Set(LOCAL);
  names.add(new URL(config.urls.mcp).hostname.toLowerCase());
  if (config.host !== '0.0.0.0' && config.host !== '::') names.add(config.host.toLowerCase());
  return names;
}

/**
 * Host header → hostname, remembered: every request parses the same few Host values (a URL parse was ~2 % of a
 * call_api's CPU). A pure function of the header's text, so a remembered answer is the answer. A client picks the
 * header, so the map is emptied when full rather than grown.
 */
const HOSTNAME_MEMO_MAX = 256;
const hostnames = new Map<string, string>();

function hostnameOf(hostHeader: string): string {
  let name = hostnames.get(hostHeader);
  if (name !== undefined) return name;
  try {
    name = new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    name = '';
  }
  if (hostnames.size >= HOSTNAME_MEMO_MAX) hostnames.clear();
  hostnames.set(hostHeader, name);
  return name;
}

/** Why the request is refused, or null when Host and Origin are acceptable. */
export function rebindingRefusal(
  allowed: ReadonlySet<string>,
  host: string | undefined,
  origin: string | undefined,
): string | null {
  if (!host || !allowed.has(hostnameOf(host))) return `Host header ${JSON.stringify(host ?? '')} is not this server`;
  if (origin !== undefined && origin !== 'null') {
    let name = '';
    try {
      name = new URL(origin).hostname.toLowerCase();
    } catch {
      /* unparseable Origin: refused below */
    }
    if (!allowed.has(name)) return `Origin ${JSON.stringify(origin)} is not allowed`;
  }
  return null;
}
