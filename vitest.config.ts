import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PostgreSQL-only suites run once, in the PostgreSQL pass (vitest.pg.config.ts).
    exclude: ['**/node_modules/**', 'test/integration/store/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // A failed test runs once more; one that passes only then is named FLAKY in .ci/run's summary (not hidden).
    retry: 1,
    // The JSON report feeds .ci/run's closing 'N passed, N failed' line.
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
  },
});
