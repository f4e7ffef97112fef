/**
 * The gateway's background thread, on its own SQLite connection, so nothing here can stall the event loop:
 * WAL checkpoints (`wal_checkpoint(PASSIVE)`; gateway connections run with wal_autocheckpoint = 0) and this
 * holder's heartbeat in gateway_instances. If the heartbeat finds the holder reaped, the thread tells the parent.
 *
 * PASSIVE never blocks a writer, but under a writer that commits without pause it never catches up either, and
 * the WAL would only grow. So once the WAL passes `walLimitBytes`, the thread asks for RESTART with a short busy
 * timeout: right after a PASSIVE pass little is left to copy, and the next writer starts again at the top of the
 * WAL. RESTART, not TRUNCATE: the file keeps its size, so later commits overwrite pages the kernel already
 * holds instead of allocating (and zeroing) new ones, which cost more than SQLite itself on this machine's
 * VM. Writers on the gateway thread never sleep on the lock this takes (no-wait.ts); they retry on a timer.
 */
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';

const CODE = `
const { workerData, parentPort } = require('node:worker_threads');
const Sqlite = require(workerData.mod);
const db = new Sqlite(workerData.file);
db.pragma('busy_timeout = 5000');
const timers = [];
if (workerData.checkpointMs > 0) {
  const pageSize = db.pragma('page_size', { simple: true });
  timers.push(setInterval(() => {
    try {
      const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
      if (r && r.log * pageSize > workerData.walLimitBytes) {
        db.pragma('busy_timeout = 20');
        try { db.pragma('wal_checkpoint(RESTART)'); } finally { db.pragma('busy_timeout = 5000'); }
      }
    } catch {}
  }, workerData.checkpointMs));
}
if (workerData.holderId) {
  const beat = db.prepare('UPDATE gateway_instances SET heartbeat_at = ? WHERE id = ? AND stopped_at IS NULL');
  timers.push(setInterval(() => {
    try {
      if (beat.run(Date.now(), workerData.holderId).changes !== 1) parentPort.postMessage('reaped');
    } catch {}
  }, workerData.heartbeatMs));
}
parentPort.on('message', () => { timers.forEach(clearInterval); try { db.close(); } catch {} process.exit(0); });
`;

export interface BackgroundOptions {
  file: string;
  /** 0 = no checkpoints from this process. */
  checkpointMs: number;
  /** WAL size above which the thread makes the next writer start the WAL over (RESTART checkpoint). */
  walLimitBytes: number;
  holderId: string | null;
  heartbeatMs: number;
  onReaped: () => void;
}

export function startBackground(o: BackgroundOptions): () => Promise<void> {
  const mod = createRequire(import.meta.url).resolve('better-sqlite3');
  const w = new Worker(CODE, {
    eval: true,
    workerData: { file: o.file, checkpointMs: o.checkpointMs, walLimitBytes: o.walLimitBytes, holderId: o.holderId, heartbeatMs: o.heartbeatMs, mod },
  });
  w.on('message', (m) => {
    if (m === 'reaped') o.onReaped();
  });
  w.unref();
  return () =>
    new Promise((resolve) => {
      w.once('exit', () => resolve());
      w.postMessage('stop');
      setTimeout(resolve, 1000).unref();
    });
}
