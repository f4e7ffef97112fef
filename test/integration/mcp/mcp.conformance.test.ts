/**
 * The official MCP conformance runner against the real MCP server, every scenario that applies to a tools-only
 * server, with conformance-baseline.yml listing the checks that cannot pass here and the scenarios not run (and why).
 * The runner needs Node >= 22: see test/helpers/conformance.ts for which Node runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CONFORMANCE_NODE, CONFORMANCE_RUNNER as RUNNER } from '../../helpers/conformance.js';
import { startMcpFixture, type McpFixture } from './fixture.js';

const BASELINE = join(import.meta.dirname, 'conformance-baseline.yml');
const SCENARIOS = [
  'server-initialize',
  'server-session-lifecycle',
  'server-stateless',
  'tools-list',
  'ping',
  'dns-rebinding-protection',
  'http-header-validation',
  'caching',
];

let f: McpFixture;
beforeAll(async () => {
  if (!CONFORMANCE_NODE) return;
  f = await startMcpFixture();
}, 60_000);
afterAll(() => (CONFORMANCE_NODE ? f.stop() : undefined));

describe.skipIf(!CONFORMANCE_NODE)('MCP conformance runner', () => {
  it.each(SCENARIOS)(
    '%s passes (baseline applied)',
    (scenario) => {
      const r = spawnSync(
        CONFORMANCE_NODE ?? 'node',
        [RUNNER, 'server', '--url', f.endpoint, '--scenario', scenario, '--expected-failures', BASELINE],
        { encoding: 'utf8', timeout: 90_000 },
      );
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    },
    100_000,
  );
});
