/**
 * Worker-thread entry that reads a search index base (search-index.base.ts) on its own connection and posts it
 * back, its typed arrays transferred: at 10,000 listings the read takes about a second, which the request thread
 * must not spend.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../../core/db/database.js';
import { readIndexBase } from './search-index.base.js';

const sqlite = openSqlite((workerData as { file: string }).file);
try {
  const base = readIndexBase(sqlite);
  parentPort!.postMessage(base, [
    base.termStart.buffer,
    base.postDoc.buffer,
    base.postFreq.buffer,
    base.docRowid.buffer,
    base.docLen.buffer,
  ]);
} finally {
  sqlite.close();
}
