/**
 * Worker thread for the ledger-writer micro-benchmark: runs `PRAGMA wal_checkpoint(PASSIVE)` on its own
 * connection every `intervalMs`, as a gateway does off its event loop, and reports each checkpoint's pages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new Database(file);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  const t0 = performance.now();
  const r = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
  parentPort!.postMessage({ ms: performance.now() - t0, ...r[0] });
}, intervalMs);
parentPort!.on('message', (m) => {
  if (m === 'stop') {
    clearInterval(timer);
    db.close();
    process.exit(0);
  }
});
