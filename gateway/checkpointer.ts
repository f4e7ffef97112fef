/**
 * The gateway's background thread, on its own SQLite connection, so nothing here can stall the event loop:
 * WAL checkpoints (`wal_checkpoint(PASSIVE)`; gateway connections run with wal_autocheckpoint = 0) and this
 * holder's heartbeat in gateway_instances. If the heartbeat finds the holder reaped, the thread tells the parent.
 *
 * When: every CHECKPOINT_POLL_MS while frames wait (CHECKPOINT_IDLE_POLL_MS while none do) the thread reads how many
 * WAL frames wait to be copied (the wal-index header in the `-shm` file: 100 bytes, no lock, no SQL) and starts a
 * pass once `checkpointFrames` wait, or `checkpointMs` after the last pass if anything waits at all. Each pass ends
 * in an fsync of the WAL, and while that fsync runs the event loop's next WAL write can block in the kernel (ext4
 * journal) for its whole length: a pass every 200 ms under one-at-a-time calls flushed ~25 MB and put 4-5 ms on the
 * p99; bounding the frames per pass halved it (gateway/README.md). Under saturating load the bound changes little:
 * each commit carries many calls. After a pass that a reader kept from copying anything, and for every RESTART
 * attempt, the thread keeps to the interval.
 *
 * PASSIVE never blocks a writer, but under a writer that commits without pause it never catches up either, and
 * the WAL would only grow. So once the WAL passes `walLimitBytes`, the thread asks for RESTART with a short busy
 * timeout: right after a PASSIVE pass little is left to copy, and the next writer starts again at the top of the
 * WAL. RESTART, not TRUNCATE: the file keeps its size, so later commits overwrite pages the kernel already
 * holds instead of allocating (and zeroing) new ones, which cost more than SQLite itself on this machine's
 * VM. Writers on the gateway thread never sleep on the lock this takes (no-wait.ts); they retry on a timer.
 */
import { Worker } from 'node:worker_threads';
import { sqliteDriver } from '../core/db/sqlite-driver.js';

const CODE = `
const { workerData, parentPort } = require('node:worker_threads');
const Sqlite = require(workerData.mod);
const db = new Sqlite(workerData.file);
db.pragma('busy_timeout = 5000');
const timers = [];
if (workerData.checkpointMs > 0) {
  const fs = require('node:fs');
  const pageSize = db.pragma('page_size', { simple: true });
  // The wal-index header (https://sqlite.org/walformat.html): mxFrame at byte 16, then nBackfill at byte 96 in
  // the checkpoint info, both in native byte order. A torn read only makes one pass early or late.
  const header = Buffer.alloc(100);
  const le = require('node:os').endianness() === 'LE';
  let shm = -1;
  /** [frames in the WAL, frames already copied], or null when the header cannot be read. */
  const backlog = () => {
    try {
      if (shm < 0) shm = fs.openSync(workerData.file + '-shm', 'r');
      if (fs.readSync(shm, header, 0, 100, 0) < 100) return null;
      return le ? [header.readUInt32LE(16), header.readUInt32LE(96)] : [header.readUInt32BE(16), header.readUInt32BE(96)];
    } catch {
      return null; // unreadable: passes on the interval alone
    }
  };
  let lastPass = performance.now();
  let lastRestart = -Infinity;
  // A reader holding an old snapshot (a long report, a backup) keeps PASSIVE from copying past it: the backlog then
  // stays over the threshold however often we pass. So after a pass that copied nothing, and for RESTART (which
  // takes the write lock while it waits for readers), the thread keeps to the interval.
  let stalled = false;
  // Polls every pollMs while frames wait (or the header is unreadable), every idlePollMs once nothing waits: an idle
  // gateway's thread then wakes 20 times a second instead of 200 (it was ~3 % of a core at idle).
  const poll = () => {
    const waiting = pass();
    if (workerData.reportPolls) parentPort.postMessage({ poll: waiting });
    timer = setTimeout(poll, waiting === 0 ? workerData.idlePollMs : Math.min(workerData.pollMs, workerData.checkpointMs));
  };
  let timer = setTimeout(poll, workerData.pollMs);
  timers.push({ stop: () => clearTimeout(timer) });
  /** One look at the backlog and, when due, one pass; returns the frames that were waiting (null: unknown). */
  const pass = () => {
    const b = backlog();
    const waiting = b === null ? null : b[0] - b[1];
    const now = performance.now();
    if (waiting !== null && waiting <= 0) return 0;
    const due = now - lastPass >= workerData.checkpointMs;
    if (!due && (waiting === null || waiting < workerData.checkpointFrames || stalled)) return waiting;
    lastPass = now;
    try {
      const t0 = performance.now();
      const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
      stalled = r !== undefined && b !== null && r.checkpointed <= b[1] && r.checkpointed < r.log;
      let restarted = false;
      if (r && r.log * pageSize > workerData.walLimitBytes && now - lastRestart >= workerData.checkpointMs) {
        lastRestart = now;
        db.pragma('busy_timeout = 20');
        try { restarted = db.pragma('wal_checkpoint(RESTART)')[0].busy === 0; } finally { db.pragma('busy_timeout = 5000'); }
        if (restarted) stalled = false;
      }
      if (workerData.report) parentPort.postMessage({ checkpoint: { ms: performance.now() - t0, frames: r ? r.log : 0, restarted } });
    } catch {}
    return waiting;
  };
}
if (workerData.holderId) {
  const beat = db.prepare('UPDATE gateway_instances SET heartbeat_at = ? WHERE id = ? AND stopped_at IS NULL');
  const beating = setInterval(() => {
    try {
      if (beat.run(Date.now(), workerData.holderId).changes !== 1) parentPort.postMessage('reaped');
    } catch {}
  }, workerData.heartbeatMs);
  timers.push({ stop: () => clearInterval(beating) });
}
parentPort.on('message', () => { timers.forEach((t) => t.stop()); try { db.close(); } catch {} process.exit(0); });
`;

/** How often the checkpoint thread looks at the WAL's backlog (a 100-byte read of the -shm file) while frames wait. */
export const CHECKPOINT_POLL_MS = 5;
/** How often it looks while nothing waits: the first pass after an idle spell starts at most this much later. */
export const CHECKPOINT_IDLE_POLL_MS = 50;

export interface BackgroundOptions {
  file: string;
  /** The longest gap between checkpoint passes while frames wait; 0 = no checkpoints from this process. */
  checkpointMs: number;
  /** A pass starts as soon as this many frames wait (default: every `checkpointMs` only). */
  checkpointFrames?: number;
  /** WAL size above which the thread makes the next writer start the WAL over (RESTART checkpoint). */
  walLimitBytes: number;
  holderId: string | null;
  heartbeatMs: number;
  onReaped: () => void;
  /** Each checkpoint pass, when asked for (the bench). */
  onCheckpoint?: (c: CheckpointReport) => void;
  /** Each look at the backlog with the frames found waiting (null: unreadable), when asked for (tests). */
  onPoll?: (waiting: number | null) => void;
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
export function configureWriterConnection(
  sqlite: import('better-sqlite3').Database,
  o: { checkpointMs: number; walLimitBytes: number },
): void {
  if (o.checkpointMs > 0) sqlite.pragma('wal_autocheckpoint = 0');
  sqlite.pragma(`journal_size_limit = ${2 * o.walLimitBytes}`);
}

export function startBackground(o: BackgroundOptions): () => Promise<void> {
  const w = new Worker(CODE, {
    eval: true,
    workerData: {
      file: o.file,
      checkpointMs: o.checkpointMs,
      checkpointFrames: o.checkpointFrames ?? Number.MAX_SAFE_INTEGER,
      pollMs: CHECKPOINT_POLL_MS,
      idlePollMs: CHECKPOINT_IDLE_POLL_MS,
      reportPolls: o.onPoll !== undefined,
      walLimitBytes: o.walLimitBytes,
      holderId: o.holderId,
      heartbeatMs: o.heartbeatMs,
      mod: sqliteDriver.entry,
      report: o.onCheckpoint !== undefined,
    },
  });
  w.on('message', (m: unknown) => {
    if (m === 'reaped') o.onReaped();
    else if (o.onCheckpoint && typeof m === 'object' && m !== null && 'checkpoint' in m)
      o.onCheckpoint((m as { checkpoint: CheckpointReport }).checkpoint);
    else if (o.onPoll && typeof m === 'object' && m !== null && 'poll' in m)
      o.onPoll((m as { poll: number | null }).poll);
  });
  w.unref();
  return () =>
    new Promise((resolve) => {
      // Referenced while stopping: otherwise a process with nothing else to do exits before the thread has.
      w.ref();
      w.once('exit', () => resolve());
      w.postMessage('stop');
      setTimeout(resolve, 1000).unref();
    });
}
