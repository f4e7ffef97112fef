/**
 * The commit floor (issue 28's added-latency target): a uWS server that commits one row per request to a SQLite
 * file in WAL mode, opened as every svc process opens it (core/db/database.ts `openSqlite`: WAL, synchronous=NORMAL),
 * on the same file system as the gateway's data dirs, with the gateway's own checkpoint thread and writer settings
 * (gateway/checkpointer.ts, defaults of gateway/config.ts), and answers the stub's body once the row is committed. Its
 * added latency over the upstream direct is what "each answered call is a committed row before the answer" costs on
 * this machine at the least; the gateway's paid path is judged against it (+0.5 ms).
 * `node dist/bench/commit-floor.js` with BENCH_FLOOR_DB=<file>; prints a ready line like the stub.
 */
import uWS from 'uWebSockets.js';
import type Sqlite from 'better-sqlite3';
import { openSqlite } from '../core/db/database.js';
import { configureWriterConnection, startBackground } from '../gateway/checkpointer.js';
import { loadGatewayConfig } from '../gateway/config.js';
import { STUB_BODY } from './stub-upstream.js';

/**
 * A floor server's SQLite file, opened as every svc process opens it, its writer connection configured as the
 * gateway's, and the gateway's checkpoint thread started on it with the gateway's defaults.
 */
export function openFloorDb(file: string): Sqlite.Database {
  const db = openSqlite(file);
  const cfg = loadGatewayConfig({});
  configureWriterConnection(db, cfg);
  startBackground({
    file,
    checkpointMs: cfg.checkpointMs,
    checkpointFrames: cfg.checkpointFrames,
    walLimitBytes: cfg.walLimitBytes,
    holderId: null,
    heartbeatMs: cfg.heartbeatMs,
    onReaped: () => {},
  });
  return db;
}

function _main(): void {
  const file = process.env.BENCH_FLOOR_DB;
  if (!file) throw new Error('BENCH_FLOOR_DB is required');
  const db = openFloorDb(file);
  // The settled call's identity, amount and time: about what a narrow usage row holds.
  db.exec(
    'create table if not exists floor_rows (id integer primary key, key_id integer not null, endpoint_id integer not null, charged_cents integer not null, status integer not null, at_ms integer not null)',
  );
  const insert = db.prepare(
    'insert into floor_rows (key_id, endpoint_id, charged_cents, status, at_ms) values (?, ?, ?, ?, ?)',
  );
  const app = uWS.App();
  app.any('/*', (res) => {
    // One statement outside a transaction is its own transaction: one commit per request, as at one call in flight.
    insert.run(1, 1, 1, 200, Date.now());
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(STUB_BODY);
    });
  });
  app.listen('127.0.0.1', 0, (sock) => {
    if (!sock) {
      console.error('commit-floor: cannot listen');
      process.exit(1);
    }
    const port = uWS.us_socket_local_port(sock);
    console.log(JSON.stringify({ ready: 'commit-floor', url: `http://127.0.0.1:${port}`, port }));
  });
  const stop = () => {
    db.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (import.meta.url === `file://${process.argv[1]}`) _main();
