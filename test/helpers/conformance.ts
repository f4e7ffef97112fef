/**
 * The official MCP conformance runner needs Node >= 22 (fs.globSync). It runs under this process's Node when that is
 * 22 or later, else under the Node that SVC_TEST_CONFORMANCE_NODE names (.ci/run points it at the Node 24 it installs
 * in .ci/nodes/); with neither, the conformance tests are skipped. svc's own `npm install` downloads no Node.
 */
import { join } from 'node:path';
import { ROOT } from './processes.js';

export const CONFORMANCE_NODE: string | undefined =
  process.env.SVC_TEST_CONFORMANCE_NODE ||
  (Number(process.versions.node.split('.')[0]) >= 22 ? process.execPath : undefined);
export const CONFORMANCE_RUNNER = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
