import { describe, expect, it } from 'vitest';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openSqlite } from '../../../control/db/database.js';
import { tempDataDir } from '../../helpers/processes.js';
import { startBackground } from '../../../gateway/checkpointer.js';

const walSize = (file: string) => (existsSync(file + '-wal') ? statSync(file + '-wal').size : 0);

/** A data file whose WAL holds about 6 MB of committed frames (no autocheckpoint, as in the gateway). */
function fileWithBigWal() {
  const data = tempDataDir();
  const file = join(data.dir, 'svc.db');
  const db = openSqlite(file);
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < 20_000; i++) insert.run('x'.repeat(200));
  }).immediate();
  return { data, file, db };
}

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

describe('gateway checkpoint thread', () => {
  it('resets (truncates) the WAL once it passes the limit', async () => {
    const { data, file, db } = fileWithBigWal();
    expect(walSize(file)).toBeGreaterThan(4 * 1024 * 1024);
    const stop = startBackground({ file, checkpointMs: 20, walLimitBytes: 1024 * 1024, holderId: null, heartbeatMs: 60_000, onReaped: () => {} });
    try {
      expect(await waitFor(() => walSize(file) === 0, 5000)).toBe(true);
      expect(db.prepare('SELECT COUNT(*) FROM t').pluck().get()).toBe(20_000);
    } finally {
      await stop();
      db.close();
      data.cleanup();
    }
  });

  it('under the limit only backfills: PASSIVE never shrinks the WAL file', async () => {
    const { data, file, db } = fileWithBigWal();
    const before = walSize(file);
    const stop = startBackground({ file, checkpointMs: 20, walLimitBytes: 1024 * 1024 * 1024, holderId: null, heartbeatMs: 60_000, onReaped: () => {} });
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(walSize(file)).toBe(before);
    } finally {
      await stop();
      db.close();
      data.cleanup();
    }
  });
});
