/**
 * Enumerations the CLI validates before calling (and completes in the shell). Local copies until the domain
 * layer's `core/schemas` lands; the CLI never imports control/.
 */
export const BOARDS = ['top_grossing', 'most_used', 'most_reliable', 'best_value', 'trending', 'new_rising'] as const;
export const SORTS = ['relevance', 'price', 'popularity', 'reliability', 'newest'] as const;
export const SCOPES = [
  'catalog:read',
  'proxy:call',
  'keys:write',
  'usage:read',
  'billing:write',
  'provider:write',
] as const;
export const APPROVAL_MODES = ['auto', 'free_only'] as const;
export const INJECTIONS = ['bearer', 'header', 'query'] as const;
