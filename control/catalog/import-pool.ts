/**
 * Imports run in worker threads so the control plane keeps answering while a 40 MB document is parsed: at most
 * `workers` at once, each in a fresh worker with its own heap cap (`resourceLimits`) and a deadline, and at most
 * `queue` waiting. A full queue answers `503 busy` with Retry-After at once instead of piling work up.
 */
import { counter, histogram } from '../../core/metrics.js';
import { Worker } from 'node:worker_threads';
import { workerScript } from '../lib/worker-script.js';
import { SvcError } from '../../core/errors.js';
import type { ImportJob, ImportJobResult, ImportStats, ParsedImport } from './import-job.js';
import type { StoreStats, StoreTarget } from './import-store.js';
import type { ToWorker, WorkerReply } from './import-worker.js';

export interface ImportPoolOptions {
  /** Imports running at once. */
  workers: number;
  /** Imports waiting for a worker before new ones are refused with `busy`. */
  queue: number;
  /** V8 old-generation cap per import worker. */
  maxHeapMb: number;
  timeoutMs: number;
}

export const DEFAULT_IMPORT_POOL: ImportPoolOptions = { workers: 1, queue: 8, maxHeapMb: 2048, timeoutMs: 120_000 };

/** Seconds a refused caller is told to wait: roughly one large import. */
const BUSY_RETRY_AFTER_S = 10;

const importJobs = counter('svc_import_jobs_total', 'OpenAPI imports run in the import workers, by outcome', [
  'outcome',
]);
const importDuration = histogram(
  'svc_import_duration_seconds',
  'Time an OpenAPI import held a worker (parse, and store when storing)',
  [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
  ['outcome'],
);

export class ImportPool {
  readonly #opts: ImportPoolOptions;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  /** Workers kept between imports (module loading costs more than most imports); a failed one is discarded. */
  readonly #idle: Worker[] = [];

  constructor(opts: Partial<ImportPoolOptions> = {}) {
    this.#opts = { ...DEFAULT_IMPORT_POOL, ...opts };
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /** Parses in a worker and returns everything, endpoints included (re-imports, benchmarks). */
  run(job: ImportJob): Promise<ImportJobResult> {
    return this.#withWorker(async (ask) => {
      const reply = await ask({ type: 'run', job, store: false });
      if (reply.kind !== 'result') throw new Error(`import worker answered ${reply.kind} to run`);
      return reply.result;
    });
  }

  /**
   * Parses in a worker, hands the parsed import (without endpoints) to `place`, which creates the listing and names
   * where to write, and has the worker write the endpoints there through its own connection. When `place` throws,
   * nothing is written; when the write fails, the caller removes what `place` created.
   */
  runAndStore(
    job: ImportJob,
    place: (parsed: ParsedImport, stats: ImportStats) => Promise<StoreTarget>,
  ): Promise<{ parsed: ParsedImport; stats: ImportStats; stored: StoreStats }> {
    return this.#withWorker(async (ask, tell) => {
      const reply = await ask({ type: 'run', job, store: true });
      if (reply.kind !== 'parsed') throw new Error(`import worker answered ${reply.kind} to run`);
      let target: StoreTarget;
      try {
        target = await place(reply.parsed, reply.stats);
      } catch (e) {
        tell({ type: 'drop' });
        throw e;
      }
      const stored = await ask({ type: 'store', target });
      if (stored.kind !== 'stored') throw new Error(`import worker answered ${stored.kind} to store`);
      return { parsed: reply.parsed, stats: reply.stats, stored: stored.stored };
    });
  }

  /** Stops the idle workers (running ones end with their import). */
  async close(): Promise<void> {
    await Promise.all(this.#idle.splice(0).map((w) => w.terminate()));
  }

  /** Waits for a place in the pool (or refuses with `busy`), then holds one worker for `converse`. */
  async #withWorker<T>(converse: Conversation<T>): Promise<T> {
    if (this.#running >= this.#opts.workers) {
      if (this.#waiting.length >= this.#opts.queue)
        throw new SvcError(
          'busy',
          `${this.#running} imports are running and ${this.#waiting.length} are waiting; try again shortly`,
          { retryAfter: BUSY_RETRY_AFTER_S },
        );
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    this.#running++;
    const started = performance.now();
    let outcome = 'failed';
    try {
      const result = await this.#converse(converse);
      outcome = 'ok';
      return result;
    } finally {
      importJobs.inc({ outcome });
      importDuration.observe({ outcome }, (performance.now() - started) / 1000);
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  /**
   * One import's exchange with a worker under one deadline: a worker that runs out of heap, exits or overruns is
   * terminated and the exchange fails with `import_failed`; a worker that answered every message is kept.
   */
  async #converse<T>(converse: Conversation<T>): Promise<T> {
    const { maxHeapMb, timeoutMs } = this.#opts;
    const worker =
      this.#idle.pop() ??
      new Worker(workerScript('catalog/import-worker.js'), {
        resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
        stdout: false,
        stderr: false,
      });
    let broken: SvcError | null = null;
    let waiting: { resolve: (r: WorkerReply) => void; reject: (e: SvcError) => void } | null = null;
    const breakOff = (e: SvcError): void => {
      broken ??= e;
      waiting?.reject(e);
      waiting = null;
    };
    const onMessage = (reply: WorkerReply): void => {
      const w = waiting;
      waiting = null;
      w?.resolve(reply);
    };
    const onError = (e: NodeJS.ErrnoException): void =>
      breakOff(
        e.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new SvcError('import_failed', `The import needed more than ${maxHeapMb} MB of memory and was stopped`, {
              extra: { limit: 'import_heap_mb', value: maxHeapMb, max: maxHeapMb, at: '/' },
            })
          : new SvcError('import_failed', `The import failed: ${e.message.slice(0, 300)}`),
      );
    const onExit = (code: number): void =>
      breakOff(new SvcError('import_failed', `The import worker exited (code ${code}) without a result`));
    const timer = setTimeout(
      () =>
        breakOff(
          new SvcError('import_failed', `The import took longer than ${timeoutMs / 1000} s and was stopped`, {
            extra: { limit: 'import_seconds', value: timeoutMs / 1000, max: timeoutMs / 1000, at: '/' },
          }),
        ),
      timeoutMs,
    );
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.ref();
    const tell = (msg: ToWorker): void => worker.postMessage(msg);
    const ask = (msg: ToWorker): Promise<Answer> =>
      new Promise<WorkerReply>((resolve, reject) => {
        if (broken) return reject(broken);
        waiting = { resolve, reject };
        tell(msg);
      }).then((reply) => {
        if (!reply.ok) throw new SvcError(reply.code, reply.detail, reply.extra ? { extra: reply.extra } : {});
        return reply;
      });
    try {
      return await converse(ask, tell);
    } finally {
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (!broken && waiting === null && this.#idle.length < this.#opts.workers) {
        worker.unref();
        this.#idle.push(worker);
      } else void worker.terminate();
    }
  }
}

type Answer = Extract<WorkerReply, { ok: true }>;
type Conversation<T> = (ask: (msg: ToWorker) => Promise<Answer>, tell: (msg: ToWorker) => void) => Promise<T>;

let shared: ImportPool | undefined;

/** The control process's one pool (sized by the first caller's config: SVC_IMPORT_*). */
export function importPool(opts: Partial<ImportPoolOptions> = {}): ImportPool {
  shared ??= new ImportPool(opts);
  return shared;
}
