/**
 * Worker-thread entry of the leaderboard refresh (leaderboards.job.ts). The refresh reads 30 days of usage and every
 * live listing: on the control plane's own thread that blocked every request for 150-360 ms a minute at 10,000
 * listings, and grows with usage. Here it runs on its own connection; only its short write transactions touch
 * the shared file's write lock.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../core/db/database.js';
import { refreshLeaderboards } from './leaderboards.service.js';

export interface RefreshRequest {
  now: number;
}
export type RefreshReply = { ok: true } | { ok: false; error: string };

const port = parentPort!;
const handles = openDatabase((workerData as { file: string }).file);

port.on('message', (msg: RefreshRequest) => {
  refreshLeaderboards(handles.db, msg.now).then(
    () => port.postMessage({ ok: true } satisfies RefreshReply),
    (e: unknown) =>
      port.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) } satisfies RefreshReply),
  );
});
