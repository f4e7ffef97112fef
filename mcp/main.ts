/**
 * MCP process. This round it serves only its health, the OAuth protected-resource metadata and a clear 503 on
 * /mcp: the tools themselves (spec §4, MCP) are a later issue and will call the control/* services directly.
 */
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { loadConfigOrExit } from '../core/config.js';
import { createLogger } from '../core/log.js';
import { SvcError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { PROBLEM_CONTENT_TYPE, problemOf } from '../core/problem.js';

const config = loadConfigOrExit();
const log = createLogger('mcp', config.logLevel);
const app = new Hono();

app.get('/healthz', (c) => c.json({ ok: true, process: 'mcp' }));
app.get('/.well-known/oauth-protected-resource', (c) =>
  c.json({
    resource: `${config.urls.mcp}/mcp`,
    authorization_servers: [config.urls.control],
    bearer_methods_supported: ['header'],
    scopes_supported: ['catalog:read', 'proxy:call', 'keys:write', 'usage:read', 'billing:write', 'provider:write'],
  }),
);
app.all('/mcp', (c) => {
  const err = new SvcError(
    'unavailable',
    'The MCP tools are not enabled in this build yet; use the REST control plane (/v1) meanwhile',
  );
  return c.body(JSON.stringify(problemOf(err, newId('req'))), 503, { 'content-type': PROBLEM_CONTENT_TYPE });
});

const server = serve({ fetch: app.fetch, port: config.ports.mcp, hostname: config.host }, (info: AddressInfo) => {
  const url = `http://${info.address}:${info.port}`;
  process.stdout.write(JSON.stringify({ ready: 'mcp', url, port: info.port }) + '\n');
  log.info('mcp listening', { url });
});

function shutdown(): void {
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
