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

function hostnameOf(hostHeader: string): string {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return '';
  }
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
