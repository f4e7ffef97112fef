/** The spec's scopes and the sets that registration and verification grant. */
export const ALL_SCOPES = [
  'catalog:read',
  'proxy:call',
  'keys:write',
  'usage:read',
  'billing:write',
  'provider:write',
] as const;

export type Scope = (typeof ALL_SCOPES)[number];

/** Exactly what `POST /v1/register` grants. */
export const REGISTER_SCOPES: readonly Scope[] = ['catalog:read', 'proxy:call', 'keys:write', 'usage:read'];
/** Added to a registered org's keys when its email is verified. */
export const VERIFIED_EXTRA_SCOPES: readonly Scope[] = ['billing:write', 'provider:write'];

export function isScope(s: string): s is Scope {
  return (ALL_SCOPES as readonly string[]).includes(s);
}

export function parseScopes(stored: string): Scope[] {
  return stored.split(' ').filter(isScope);
}

export function formatScopes(scopes: Iterable<Scope>): string {
  const set = new Set(scopes);
  return ALL_SCOPES.filter((s) => set.has(s)).join(' ');
}
