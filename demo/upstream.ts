/**
 * The demo upstream API that `npm start` runs behind the demo listing (node:http). Listens on SVC_DEMO_UPSTREAM_PORT
 * (default 4010, 0 = ephemeral), prints one ready line `{"ready":"demo-upstream",...}`, stops on SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handle, send } from './upstream-handler.js';
import { onStop } from '../core/lifecycle.js';

const port = Number.parseInt(process.env.SVC_DEMO_UPSTREAM_PORT ?? '4010', 10);
const host = process.env.SVC_HOST === '0.0.0.0' ? '0.0.0.0' : '127.0.0.1';
const server = createServer((req, res) => {
  handle(req, res).catch(() => send(res, 500, { error: 'demo upstream failed' }));
});
server.listen(Number.isFinite(port) ? port : 4010, host, () => {
  const a = server.address() as AddressInfo;
  process.stdout.write(
    JSON.stringify({ ready: 'demo-upstream', url: `http://127.0.0.1:${a.port}`, port: a.port }) + '\n',
  );
});
const stop = (): void => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
onStop(stop);
