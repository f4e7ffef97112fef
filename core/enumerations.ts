/**
 * Closed value lists that the control plane validates and the CLI and MCP offer (flags, completion, tool enums).
 * Zod-free on purpose: the CLI imports this, and a command should not pay for loading zod to list six names.
 */

/** The spec's six merit boards (docs/leaderboards.md). */
export const BOARDS = ['top_grossing', 'most_used', 'most_reliable', 'best_value', 'trending', 'new_rising'] as const;
export type Board = (typeof BOARDS)[number];

/** Catalog search orders (docs/catalog.md). */
export const SORTS = ['relevance', 'price', 'popularity', 'reliability', 'newest'] as const;
export type Sort = (typeof SORTS)[number];

/** auto: any endpoint within caps; free_only: price-0 endpoints only (docs/identity.md). */
export const APPROVAL_MODES = ['auto', 'free_only'] as const;

/** How the gateway attaches a provider's upstream secret; a provider chooses one (the stored default 'none' is not offered). */
export const CREDENTIAL_INJECTIONS = ['bearer', 'header', 'query'] as const;
