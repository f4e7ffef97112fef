/**
 * WAL checkpoints off the event loop: the gateway's connections run with wal_autocheckpoint = 0 and this
 * worker thread, on its own connection, runs `PRAGMA wal_checkpoint(PASSIVE)` on a timer.
 */
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';

const CODE = `
const { workerData, parentPort } = require('node:worker_threads');
const Sqlite = require(workerData.mod);
const db = new Sqlite(workerData.file);
db.pragma('busy_timeout = 1000');
const t = setInterval(() => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} }, workerData.ms);
parentPort.on('message', () => { clearInterval(t); try { db.close(); } catch {} process.exit(0); });
`;

export function startCheckpointer(file: string, ms: number): () => Promise<void> {
  const mod = createRequire(import.meta.url).resolve('better-sqlite3');
  const w = new Worker(CODE, { eval: true, workerData: { file, ms, mod } });
  w.unref();
  return () =>
    new Promise((resolve) => {
      w.once('exit', () => resolve());
      w.postMessage('stop');
      setTimeout(resolve, 1000).unref();
    });
}
