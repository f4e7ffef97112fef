/** Control-plane process: migrate the shared SQLite file, serve REST on SVC_CONTROL_PORT, stop cleanly on signals. */
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { loadConfigOrExit, productionProblems } from '../core/config.js';
import { onStop } from '../core/lifecycle.js';
import { processRegistry, registryRenderer, serveMetrics } from '../core/metrics.js';
import { createApp } from './app.js';
import { createAppContext } from './context.js';
import { paymentsMode } from './billing/payments.js';
import { startBackgroundJobs } from './jobs.js';
import { seedDemo } from './demo-seed.js';
import { answerClientErrors } from './lib/client-error.js';
import { discardUnfinishedImports } from './catalog/import-store.js';

const config = loadConfigOrExit();
const problems = productionProblems(config);
if (problems.length) {
  process.stderr.write(`svc control plane cannot start in production:\n  ${problems.join('\n  ')}\n`);
  process.exit(1);
}
const ctx = await createAppContext(config, { process: 'control' });
const log = ctx.log;
const discarded = await discardUnfinishedImports(ctx.db);
if (discarded.length) log.warn('removed listings whose import was interrupted', { api_ids: discarded });

if (config.demo) await seedDemo(ctx);
const app = createApp(ctx);
const stopJobs = startBackgroundJobs(ctx);

const metrics = await serveMetrics(config.metrics, 'control', registryRenderer(processRegistry()), log);
const server = serve({ fetch: app.fetch, port: config.ports.control, hostname: config.host }, (info: AddressInfo) => {
  const url = `http://${info.address}:${info.port}`;
  // One machine-readable line on stdout: the supervisor and tests read the bound port from it.
  process.stdout.write(JSON.stringify({ ready: 'control', url, port: info.port, metrics_url: metrics?.url }) + '\n');
  log.info('control plane listening', { url, env: config.env, mail: ctx.mailer.kind, payments: paymentsMode(ctx) });
});

let stopping = false;
function shutdown(signal: string): void {
  if (stopping) return;
  stopping = true;
  log.info('stopping', { signal });
  stopJobs();
  server.close(() => {
    void ctx.close().then(() => process.exit(0));
  });
  setTimeout(() => process.exit(0), 3000).unref();
}
onStop(shutdown);
// Requests Node's parser refuses get a problem+json answer, not Node's bare status line (docs/security.md).
answerClientErrors(server);
