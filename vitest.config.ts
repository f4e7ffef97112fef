import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // The JSON report feeds .ci/run's closing 'N passed, N failed' line.
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
  },
});
