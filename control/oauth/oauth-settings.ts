/** Lifetimes and addresses of the OAuth 2.1 authorization server (documented in docs/oauth.md). */
import type { Config } from '../../core/config.js';
import { ALL_SCOPES } from '../../core/scopes.js';

export const CODE_TTL_MS = 5 * 60_000;
export const ACCESS_TOKEN_TTL_MS = 60 * 60_000;
export const REFRESH_TOKEN_TTL_MS = 30 * 86_400_000;
/** How long a fetched Client ID Metadata Document is reused before it is fetched again. */
export const CLIENT_DOCUMENT_TTL_MS = 10 * 60_000;
export const CLIENT_DOCUMENT_MAX_BYTES = 5 * 1024;

/** Scope values a client may ask for; every approval grants the full marketplace scopes (see docs/oauth.md). */
export const REQUESTABLE_SCOPES: readonly string[] = [...ALL_SCOPES, 'offline_access'];

/**
 * The issuer: the control plane's public URL. When the control port is ephemeral (0, tests) the configured URL
 * cannot name the bound port, so the origin the request came to is used instead.
 */
export function issuerOf(config: Readonly<Config>, requestUrl: string): string {
  if (config.ports.control === 0) return new URL(requestUrl).origin;
  return config.urls.control.replace(/\/+$/, '');
}

/** The one RFC 8707 resource tokens are bound to: the MCP endpoint. */
export function mcpResourceOf(config: Readonly<Config>): string {
  return `${config.urls.mcp.replace(/\/+$/, '')}/mcp`;
}

/** Resource indicators compare after dropping a trailing slash (`…/mcp/` names the same endpoint as `…/mcp`). */
export function sameResource(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}
