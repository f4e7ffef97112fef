import { describe, expect, it } from 'vitest';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openSqlite } from '../../../core/db/database.js';
import { tempDataDir } from '../../helpers/processes.js';
import { startBackground, type CheckpointReport } from '../../../gateway/checkpointer.js';
import { isBusy } from '../../../gateway/no-wait.js';

const walSize = (file: string) => (existsSync(file + '-wal') ? statSync(file + '-wal').size : 0);

/** A data file whose WAL holds `rows` rows of committed frames (no autocheckpoint, as in the gateway). */
function walFile(rows: number) {
  const data = tempDataDir();
  const file = join(data.dir, 'svc.db');
  const db = openSqlite(file);
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const append = (n: number) =>
    db
      .transaction(() => {
        for (let i = 0; i < n; i++) insert.run('x'.repeat(200));
      })
      .immediate();
  append(rows);
  return { data, file, db, insert, append };
}

/** About 6 MB of WAL. */
const fileWithBigWal = () => walFile(20_000);

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

/**
 * The checkpoint thread on `file` with a pass every 100 waiting frames and an interval of a minute (so any pass
 * within a test is one the frame count started); every pass (and, with `onPoll`, every look) is recorded.
 */
function startByFrames(file: string, onPoll?: (waiting: number | null) => void) {
  const passes: CheckpointReport[] = [];
  const stop = startBackground({
    file,
    checkpointMs: 60_000,
    checkpointFrames: 100,
    walLimitBytes: 1024 * 1024 * 1024,
    holderId: null,
    heartbeatMs: 60_000,
    onReaped: () => {},
    onCheckpoint: (c) => passes.push(c),
    ...(onPoll ? { onPoll } : {}),
  });
  return { passes, stop };
}

describe('gateway checkpoint thread', () => {
  it('past the limit, makes the next writer start the WAL over, reusing the file instead of truncating it', async () => {
    const { data, file, db } = fileWithBigWal();
    const before = walSize(file);
    expect(before).toBeGreaterThan(4 * 1024 * 1024);
    const stop = startBackground({
      file,
      checkpointMs: 20,
      walLimitBytes: 1024 * 1024,
      holderId: null,
      heartbeatMs: 60_000,
      onReaped: () => {},
    });
    try {
      const framesAfterOneWrite = () => {
        db.prepare('INSERT INTO t (v) VALUES (?)').run('y');
        return (db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log;
      };
      // Restarted: one small commit is the only thing in the WAL, written from the top of the same file.
      expect(await waitFor(() => framesAfterOneWrite() <= 4, 5000)).toBe(true);
      // Not truncated (a probe before the restart may have appended a frame or two at the end).
      expect(walSize(file)).toBeGreaterThanOrEqual(before);
      expect(walSize(file)).toBeLessThan(before + 64 * 1024);
      expect(db.prepare('SELECT COUNT(*) FROM t').pluck().get()).toBeGreaterThan(20_000);
    } finally {
      await stop();
      db.close();
      data.cleanup();
    }
  });

  it('under the limit only backfills: PASSIVE never shrinks the WAL file', async () => {
    const { data, file, db } = fileWithBigWal();
    const before = walSize(file);
    const stop = startBackground({
      file,
      checkpointMs: 20,
      walLimitBytes: 1024 * 1024 * 1024,
      holderId: null,
      heartbeatMs: 60_000,
      onReaped: () => {},
    });
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(walSize(file)).toBe(before);
    } finally {
      await stop();
      db.close();
      data.cleanup();
    }
  });

  it('starts a pass as soon as enough frames wait, without waiting for the interval, and none while nothing waits', async () => {
    const { data, file, db, insert, append } = walFile(0);
    const { passes, stop } = startByFrames(file);
    try {
      for (let i = 0; i < 20; i++) insert.run('x'.repeat(200)); // 20 frames: under the threshold
      await new Promise((r) => setTimeout(r, 200));
      expect(passes).toHaveLength(0);
      append(2_000); // well over 100 frames
      expect(await waitFor(() => passes.length > 0, 2000)).toBe(true);
      expect(passes[0]!.frames).toBeGreaterThanOrEqual(100);
      const after = passes.length;
      await new Promise((r) => setTimeout(r, 200)); // everything copied: no further passes
      expect(passes.length).toBe(after);
    } finally {
      await stop();
      db.close();
      data.cleanup();
    }
  });

  it('looks at the backlog rarely while nothing waits, and still starts a pass soon after an idle spell', async () => {
    const { data, file, db, append } = walFile(0);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const polls: { at: number; waiting: number | null }[] = [];
    const { passes, stop } = startByFrames(file, (waiting) => polls.push({ at: performance.now(), waiting }));
    try {
      await new Promise((r) => setTimeout(r, 1000));
      const idle = polls.filter((p) => p.waiting === 0).length;
      // 1 s at CHECKPOINT_IDLE_POLL_MS (50 ms) is about 20 looks; at CHECKPOINT_POLL_MS (5 ms) it would be ~200.
      expect(idle).toBeGreaterThanOrEqual(5);
      expect(idle).toBeLessThanOrEqual(40);
      const before = polls.length;
      const t0 = performance.now();
      append(2_000); // well over 100 frames
      expect(await waitFor(() => passes.length > 0, 2000)).toBe(true);
      // The first look after the idle spell finds the frames within one idle interval (50 ms), plus slack for a
      // loaded machine; a thread that stopped looking would never find them.
      const found = polls.slice(before).find((p) => (p.waiting ?? 0) > 0);
      expect(found).toBeDefined();
      expect(found!.at - t0).toBeLessThan(1_500);
    } finally {
      await stop();
      db.close();
      data.cleanup();
    }
  });

  it('keeps to the interval while a long reader holds the backlog, so writers are not locked out by passes and RESTARTs', async () => {
    const { data, file, db, insert } = walFile(2_000);
    // A report reading an old snapshot: PASSIVE cannot copy past it, RESTART cannot finish while it lasts.
    const reader = openSqlite(file);
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) FROM t').pluck().get();
    const passes: CheckpointReport[] = [];
    const stop = startBackground({
      file,
      checkpointMs: 300,
      checkpointFrames: 50,
      walLimitBytes: 64 * 1024,
      holderId: null,
      heartbeatMs: 60_000,
      onReaped: () => {},
      onCheckpoint: (c) => passes.push(c),
    });
    db.pragma('busy_timeout = 0'); // as the gateway's writer: a held lock is an error, retried later
    let commits = 0;
    let busy = 0;
    try {
      const end = Date.now() + 800;
      while (Date.now() < end) {
        try {
          insert.run('y'.repeat(200));
          commits++;
        } catch (e) {
          if (!isBusy(e)) throw e;
          busy++;
        }
        await new Promise((r) => setTimeout(r, 2));
      }
      // Every poll (5 ms) would be ~160 passes, each RESTART holding the write lock up to 20 ms.
      expect(passes.length).toBeLessThanOrEqual(6);
      expect(busy / (busy + commits)).toBeLessThan(0.3);
    } finally {
      reader.exec('COMMIT');
      reader.close();
      await stop();
      db.close();
      data.cleanup();
    }
  });
});
