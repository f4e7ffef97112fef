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
  // Money on the control plane: usage, the books after random purchases/calls/refunds (and `svc-admin ledger
  // check`, the operator CLI on PostgreSQL), checkout, auto-reload, payouts, the test payments back-end. Paid calls
  // are seeded through the PostgreSQL gateway's own lease + settle path (test/helpers/db.ts chargeLikeGateway).
  'test/integration/control/usage.test.ts',
  'test/integration/billing/ledger-consistency.test.ts',
  'test/integration/billing/checkout.stripe.test.ts',
  'test/integration/billing/auto-reload.stripe.test.ts',
  'test/integration/billing/payouts.stripe.test.ts',
  'test/integration/billing/test-mode.test.ts',
  // Imports: the import worker writes a new listing's endpoints through its own PostgreSQL connection.
  'test/integration/providers/import.test.ts',
  // Catalog: search ranking, filters, sorts and paging (its two FTS5-only path assertions skip here, with the
  // reason in the file), leaderboards and stats refresh.
  'test/integration/catalog/search.test.ts',
  'test/integration/catalog/leaderboards.test.ts',
  // The gateway's money through real gateway processes: paid calls, usage, earnings, caps, Idempotency-Key,
  // discounts, price changes from another process; refusals change nothing (and an oversized body while the
  // pipeline awaits PostgreSQL is a 413, not a crash).
  'test/integration/gateway/gateway.money.happy.test.ts',
  'test/integration/gateway/gateway.errors.test.ts',
  'test/integration/gateway/gateway.agent-safety.test.ts',
  // The MCP process on PostgreSQL: sessions, the v1 SDK client's paid call_api and get_balance, and the principal
  // cache invalidated by the LISTEN/NOTIFY change feed (core/db/pg-change-feed.ts).
  'test/integration/mcp/mcp.sessions.test.ts',
  'test/integration/mcp/mcp.principal-cache.test.ts',
];

export default defineConfig({
  test: {
    include: PG_SUITES,
    globalSetup: ['test/helpers/global-setup.ts', 'test/helpers/pg-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // A failed test runs once more; one that passes only then is named FLAKY in .ci/run's summary (not hidden).
    retry: 1,
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report-pg.json' },
  },
});
