/**
 * The PostgreSQL pass of the two-store suites (`.ci/run` runs it after the SQLite pass): the same test files, with
 * every process and test handle of a data dir on a PostgreSQL database of its own (test/helpers/pg-global-setup.ts,
 * databaseUrlFor). Chosen to fit ~6-8 minutes on CI's two cores; the list and what each covers is in
 * docs/scale-out.md "Tests on both stores".
 */
import { defineConfig } from 'vitest/config';

export const PG_SUITES = [
  'test/integration/store/**/*.test.ts',
  'test/integration/control/keys.test.ts',
  'test/integration/control/keys.permissions.test.ts',
  'test/integration/control/usage.test.ts',
  'test/integration/billing/ledger-consistency.test.ts',
  'test/integration/billing/test-mode.test.ts',
  'test/integration/providers/terms.test.ts',
  'test/integration/catalog/search.test.ts',
  'test/integration/catalog/leaderboards.test.ts',
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
