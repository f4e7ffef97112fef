import { describe, expect, it } from 'vitest';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openSqlite } from '../../../control/db/database.js';
import { tempDataDir } from '../../helpers/processes.js';
import { startBackground } from '../../../gateway/checkpointer.js';

/** A writer that commits almost without pause, like the gateway's group commit under load; returns the peak WAL size. */
async function peakWalUnderLoad(walLimitBytes: number, ms: number): Promise<number> {
  const data = tempDataDir();
  const file = join(data.dir, 'svc.db');
  const db = openSqlite(file);
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const stop = startBackground({ file, checkpointMs: 20, walLimitBytes, holderId: null, heartbeatMs: 60_000, onReaped: () => {} });
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const batch = db.transaction(() => {
    for (let i = 0; i < 200; i++) insert.run('x'.repeat(200));
  });
  let peak = 0;
  const end = Date.now() + ms;
  try {
    while (Date.now() < end) {
      batch.immediate();
      const wal = file + '-wal';
      if (existsSync(wal)) peak = Math.max(peak, statSync(wal).size);
      await new Promise((r) => setImmediate(r));
    }
  } finally {
    await stop();
    db.close();
    data.cleanup();
  }
  return peak;
}

describe('gateway checkpoint thread', () => {
  it('keeps the WAL bounded under a writer that never pauses, where PASSIVE checkpoints alone let it grow', async () => {
    const unbounded = await peakWalUnderLoad(Number.MAX_SAFE_INTEGER, 1000);
    const bounded = await peakWalUnderLoad(1024 * 1024, 1000);
    expect(unbounded).toBeGreaterThan(8 * 1024 * 1024);
    expect(bounded).toBeLessThan(unbounded / 2);
  }, 20_000);
});
