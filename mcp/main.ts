/**
 * MCP process: the 34 tools of spec §4 at `/mcp` for both protocol eras (2025-11-25 sessions, 2026-07-28
 * stateless), on the shared SQLite file; tools call the control plane's use-case services in-process, call_api goes
 * through the gateway.
 */
import { getRequestListener } from '@hono/node-server';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfigOrExit } from '../core/config.js';
import { onStop } from '../core/lifecycle.js';
import { gauge, processRegistry, registryRenderer, serveMetrics } from '../core/metrics.js';
import { intervalJob } from '../control/lib/interval-job.js';
import { createAppContext } from '../control/context.js';
import { createGatewayCalls } from '../core/gateway-calls.js';
import { McpSessionStore } from './sessions.js';
import { PrincipalCache } from './principal-cache.js';
import { createMcpApp } from './app.js';
import { createFastToolCalls } from './fast-tool-call.js';

const config = loadConfigOrExit();
const ctx = await createAppContext(config, { process: 'mcp' });
const sessions = new McpSessionStore(ctx);
const gateway = createGatewayCalls(config.urls.gateway);
const principals = await PrincipalCache.open(ctx);
const deps = { ctx, sessions, gateway, principals };
const app = createMcpApp(deps);
const stopSweep = intervalJob(ctx.log, 'mcp session sweep', 3600_000, () => sessions.sweep(), { firstAfterMs: 5_000 });

// One tools/call is answered in front of Hono (mcp/fast-tool-call.ts). For the equivalence test only:
// SVC_MCP_FAST_TOOL_CALLS=off serves it through the SDK instead, =mark labels the fast path's answers.
const honoListener = getRequestListener(app.fetch, { hostname: config.host });
const fastMode = process.env.SVC_MCP_FAST_TOOL_CALLS;
const server = createServer(
  fastMode === 'off' ? honoListener : createFastToolCalls(deps, honoListener, { mark: fastMode === 'mark' }),
);
// Read at scrape time: sessions that have not expired, and OAuth grants that have not been revoked.
gauge('svc_mcp_sessions_open', 'MCP sessions (2025-11-25 era) not yet expired', [], async function () {
  const r = await ctx.db
    .selectFrom('mcp_sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('expires_at', '>', ctx.clock.now())
    .executeTakeFirst();
  this.set(Number(r?.n ?? 0));
});
gauge('svc_mcp_oauth_grants', 'OAuth grants to MCP clients that are not revoked', [], async function () {
  const r = await ctx.db
    .selectFrom('oauth_grants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  this.set(Number(r?.n ?? 0));
});
const metrics = await serveMetrics(config.metrics, 'mcp', registryRenderer(processRegistry()), ctx.log);
server.listen(config.ports.mcp, config.host, () => {
  const info = server.address() as AddressInfo;
  const url = `http://${info.address}:${info.port}`;
  process.stdout.write(JSON.stringify({ ready: 'mcp', url, port: info.port, metrics_url: metrics?.url }) + '\n');
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
      .then(() => principals.close())
      .then(() => ctx.close())
      .finally(() => process.exit(0));
  });
  setTimeout(() => process.exit(0), 2000).unref();
}
onStop(shutdown);
