/** The MCP Inspector in CLI mode (@modelcontextprotocol/inspector@2.12.0 --cli) lists the tools and calls one with a bearer header. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../helpers/processes.js';
import { startMcpFixture, type McpFixture } from './fixture.js';
import { SPEC_TOOLS } from './spec-tools.js';

const INSPECTOR = join(ROOT, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

let f: McpFixture;
beforeAll(async () => {
  f = await startMcpFixture();
}, 60_000);
afterAll(() => f.stop());

function inspector(...args: string[]): any {
  const r = spawnSync(process.execPath, [INSPECTOR, '--cli', f.endpoint, '--transport', 'http', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe('MCP Inspector CLI', () => {
  it('lists the tools and calls get_balance with a bearer key', () => {
    const auth = `Authorization: Bearer ${f.provider.key}`;
    const list = inspector('--method', 'tools/list', '--header', auth);
    expect(list.tools.map((t: { name: string }) => t.name)).toEqual(Object.keys(SPEC_TOOLS));
    const bal = inspector('--method', 'tools/call', '--tool-name', 'get_balance', '--header', auth);
    expect(bal.structuredContent.org_id).toBe(f.provider.orgId);
  }, 120_000);
});
