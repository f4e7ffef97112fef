/**
 * Background refresh of leaderboards and listing stats: once at start, then every SVC_LEADERBOARD_REFRESH_MS, in a
 * worker thread with its own connection (leaderboards.worker.ts) so the refresh never holds up a request. An
 * in-memory database cannot be shared with a thread, and on PostgreSQL the database does the work: both refresh
 * in-process. With several control planes on PostgreSQL one refreshes at a time (interval-job.ts `db`).
 */
import { Worker } from 'node:worker_threads';
import { workerScript } from '../lib/worker-script.js';
import type { AppContext } from '../context.js';
import { noteLeaderboardRefresh, refreshLeaderboards } from './leaderboards.service.js';
import { intervalJob } from '../lib/interval-job.js';
import type { RefreshReply, RefreshRequest } from './leaderboards.worker.js';

/** One long-lived refresh thread; a thread that dies is replaced at the next refresh. */
class RefreshThread {
  #worker: Worker | null = null;
  readonly #file: string;
  constructor(file: string) {
    this.#file = file;
  }

  refresh(now: number): Promise<void> {
    this.#worker ??= this.#start();
    const worker = this.#worker;
    return new Promise<void>((resolve, reject) => {
      const onMessage = (reply: RefreshReply) => {
        cleanup();
        if (reply.ok) resolve();
        else reject(new Error(reply.error));
      };
      const onExit = (code: number) => {
        cleanup();
        reject(new Error(`leaderboard worker exited (${code})`));
      };
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('exit', onExit);
      worker.postMessage({ now } satisfies RefreshRequest);
    });
  }

  #start(): Worker {
    const worker = new Worker(workerScript('market/leaderboards.worker.js'), { workerData: { file: this.#file } });
    worker.unref();
    worker.on('error', () => {}); // reported through 'exit' to the pending refresh
    worker.once('exit', () => {
      if (this.#worker === worker) this.#worker = null;
    });
    return worker;
  }

  close(): void {
    void this.#worker?.terminate();
    this.#worker = null;
  }
}

export function leaderboardJob(ctx: AppContext): () => void {
  const file = ctx.config.dbFile;
  // On PostgreSQL the database does the work and the process only awaits it: refreshed in-process.
  const thread = file === ':memory:' || ctx.config.databaseUrl ? null : new RefreshThread(file);
  const stop = intervalJob(
    ctx.log,
    'leaderboard refresh',
    ctx.config.leaderboardRefreshMs,
    async () => {
      const now = ctx.clock.now();
      if (!thread) return refreshLeaderboards(ctx.db, now);
      await thread.refresh(now);
      noteLeaderboardRefresh(now);
    },
    { firstAfterMs: 500, db: ctx.db },
  );
  return () => {
    stop();
    thread?.close();
  };
}
