/**
 * MCP process: the 34 tools of spec §4 at `/mcp` for both protocol eras (2025-11-25 sessions, 2026-07-28
 * stateless), on the shared SQLite file and the control plane's own code; call_api goes through the gateway.
 */
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { loadConfigOrExit } from '../core/config.js';
import { intervalJob } from '../control/lib/interval-job.js';
import { createAppContext } from '../control/context.js';
import { createControlCalls } from './control-calls.js';
import { createGatewayCalls } from './gateway-calls.js';
import { McpSessionStore } from './sessions.js';
import { createMcpApp } from './app.js';

const config = loadConfigOrExit();
const ctx = await createAppContext(config, { process: 'mcp' });
const sessions = new McpSessionStore(ctx);
const gateway = createGatewayCalls(config.urls.gateway);
const app = createMcpApp({ ctx, sessions, control: createControlCalls(ctx), gateway });
const stopSweep = intervalJob(ctx.log, 'mcp session sweep', 3600_000, () => sessions.sweep(), { firstAfterMs: 5_000 });

const server = serve({ fetch: app.fetch, port: config.ports.mcp, hostname: config.host }, (info: AddressInfo) => {
  const url = `http://${info.address}:${info.port}`;
  process.stdout.write(JSON.stringify({ ready: 'mcp', url, port: info.port }) + '\n');
  ctx.log.info('mcp listening', { url, env: config.env });
});

let stopping = false;
function shutdown(): void {
  if (stopping) return;
  stopping = true;
  stopSweep();
  server.close(() => {
    void gateway
      .close()
      .then(() => ctx.close())
      .finally(() => process.exit(0));
  });
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
