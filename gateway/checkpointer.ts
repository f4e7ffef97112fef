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
      const t0 = performance.now();
      const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
      let restarted = false;
      if (r && r.log * pageSize > workerData.walLimitBytes) {
        db.pragma('busy_timeout = 20');
        try { restarted = db.pragma('wal_checkpoint(RESTART)')[0].busy === 0; } finally { db.pragma('busy_timeout = 5000'); }
      }
      if (workerData.report) parentPort.postMessage({ checkpoint: { ms: performance.now() - t0, frames: r ? r.log : 0, restarted } });
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
  /** Each checkpoint pass, when asked for (the bench). */
  onCheckpoint?: (c: CheckpointReport) => void;
}

export interface CheckpointReport {
  /** Wall time of the pass (PASSIVE, plus RESTART when the WAL was past the limit). */
  ms: number;
  /** WAL frames at the PASSIVE pass. */
  frames: number;
  /** A RESTART went through: the next writer starts the WAL over. */
  restarted: boolean;
}

/**
 * How every gateway writer connection runs beside the checkpoint thread: no checkpoints of its own, and a WAL
 * file that is reused, only cut back once it grew past twice the limit.
 */
export function configureWriterConnection(sqlite: import('better-sqlite3').Database, o: { checkpointMs: number; walLimitBytes: number }): void {
  if (o.checkpointMs > 0) sqlite.pragma('wal_autocheckpoint = 0');
  sqlite.pragma(`journal_size_limit = ${2 * o.walLimitBytes}`);
}

export function startBackground(o: BackgroundOptions): () => Promise<void> {
  const mod = createRequire(import.meta.url).resolve('better-sqlite3');
  const w = new Worker(CODE, {
    eval: true,
    workerData: { file: o.file, checkpointMs: o.checkpointMs, walLimitBytes: o.walLimitBytes, holderId: o.holderId, heartbeatMs: o.heartbeatMs, mod, report: o.onCheckpoint !== undefined },
  });
  w.on('message', (m: unknown) => {
    if (m === 'reaped') o.onReaped();
    else if (o.onCheckpoint && typeof m === 'object' && m !== null && 'checkpoint' in m) o.onCheckpoint((m as { checkpoint: CheckpointReport }).checkpoint);
  });
  w.unref();
  return () =>
    new Promise((resolve) => {
      w.once('exit', () => resolve());
      w.postMessage('stop');
      setTimeout(resolve, 1000).unref();
    });
}
