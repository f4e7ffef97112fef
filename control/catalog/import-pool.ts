/**
 * Imports run in worker threads so the control plane keeps answering while a 40 MB document is parsed: at most
 * `workers` at once, each in a fresh worker with its own heap cap (`resourceLimits`) and a deadline, and at most
 * `queue` waiting. A full queue answers `503 busy` with Retry-After at once instead of piling work up.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SvcError } from '../../core/errors.js';
import type { ImportJob, ImportJobResult } from './import-job.js';
import type { WorkerReply } from './import-worker.js';

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

/** The compiled worker script; tests that run from TypeScript sources use the build in dist/. */
function workerScript(): URL {
  const here = new URL('./import-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  return new URL('../../dist/control/catalog/import-worker.js', import.meta.url);
}

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

  async run(job: ImportJob): Promise<ImportJobResult> {
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
    try {
      return await this.#runInWorker(job);
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  /** Stops the idle workers (running ones end with their import). */
  async close(): Promise<void> {
    await Promise.all(this.#idle.splice(0).map((w) => w.terminate()));
  }

  #runInWorker(job: ImportJob): Promise<ImportJobResult> {
    const { maxHeapMb, timeoutMs } = this.#opts;
    const worker =
      this.#idle.pop() ??
      new Worker(workerScript(), {
        resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
        stdout: false,
        stderr: false,
      });
    return new Promise<ImportJobResult>((resolve, reject) => {
      const done = (keep: boolean, fn: () => void): void => {
        clearTimeout(timer);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        if (keep && this.#idle.length < this.#opts.workers) {
          worker.unref();
          this.#idle.push(worker);
        } else void worker.terminate();
        fn();
      };
      const onMessage = (reply: WorkerReply): void =>
        done(true, () =>
          reply.ok
            ? resolve(reply.result)
            : reject(new SvcError(reply.code, reply.detail, reply.extra ? { extra: reply.extra } : {})),
        );
      const onError = (e: NodeJS.ErrnoException): void =>
        done(false, () =>
          reject(
            e.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? new SvcError('import_failed', `The import needed more than ${maxHeapMb} MB of memory and was stopped`, {
                  extra: { limit: 'import_heap_mb', value: maxHeapMb, max: maxHeapMb, at: '/' },
                })
              : new SvcError('import_failed', `The import failed: ${e.message.slice(0, 300)}`),
          ),
        );
      const onExit = (code: number): void =>
        done(false, () =>
          reject(new SvcError('import_failed', `The import worker exited (code ${code}) without a result`)),
        );
      const timer = setTimeout(
        () =>
          done(false, () =>
            reject(
              new SvcError('import_failed', `The import took longer than ${timeoutMs / 1000} s and was stopped`, {
                extra: { limit: 'import_seconds', value: timeoutMs / 1000, max: timeoutMs / 1000, at: '/' },
              }),
            ),
          ),
        timeoutMs,
      );
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.ref();
      worker.postMessage(job);
    });
  }
}

let shared: ImportPool | undefined;

/** The control process's one pool (sized by the first caller's config: SVC_IMPORT_*). */
export function importPool(opts: Partial<ImportPoolOptions> = {}): ImportPool {
  shared ??= new ImportPool(opts);
  return shared;
}
