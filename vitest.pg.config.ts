/**
 * The PostgreSQL pass of the two-store suites (`.ci/run` runs it after the SQLite pass): the same test files, with
 * every process and test handle of a data dir on a PostgreSQL database of its own (test/helpers/pg-global-setup.ts,
 * databaseUrlFor). Chosen to fit ~6-8 minutes on CI's two cores; the list and what each covers is in
 * docs/scale-out.md "Tests on both stores".
 */
import { defineConfig } from 'vitest/config';

export const PG_SUITES = [
  // The store itself: schema parity, money posting and books, serializable retry, append-only ledger, change-feed
  // order and NOTIFY, single-runner jobs, migrate-to-postgres, webhooks across replicas.
  'test/integration/store/**/*.test.ts',
  // Keys and terms through the real control process on PostgreSQL.
  'test/integration/control/keys.test.ts',
  'test/integration/control/keys.permissions.test.ts',
  'test/integration/providers/terms.test.ts',
  // The MCP process on PostgreSQL: sessions, a paid call_api charged once through the real SDK client, and the
  // principal cache invalidated by the LISTEN/NOTIFY change feed (core/db/pg-change-feed.ts).
  'test/integration/mcp/mcp.sessions.test.ts',
  'test/integration/mcp/mcp.principal-cache.test.ts',
  // Not yet here (docs/scale-out.md "Tests on both stores"): usage, leaderboards and ledger-consistency seed paid
  // calls with the SQLite settle writer (test/helpers/db.ts chargeLikeGateway); search.test.ts asserts FTS5's
  // path matching and bm25 order, which PostgreSQL's ts_rank search does not reproduce by design.
];

export default defineConfig({
  test: {
    include: PG_SUITES,
    globalSetup: ['test/helpers/global-setup.ts', 'test/helpers/pg-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report-pg.json' },
  },
});
