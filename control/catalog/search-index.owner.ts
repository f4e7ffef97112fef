/**
 * One in-memory search index per database handle (search-index.ts), attached by createAppContext. The index is
 * built on first use: in place for a small catalog, in a worker thread for a large one (searches use FTS5 until it
 * arrives), and built again the same way when the change log says in-place updates no longer cover what changed, or
 * (in the background, the old one answering meanwhile) when many listings were re-tokenized since the base.
 */
import type Sqlite from 'better-sqlite3';
import { Worker } from 'node:worker_threads';
import type { Db } from '../../core/db/database.js';
import type { Logger } from '../../core/log.js';
import { workerScript } from '../lib/worker-script.js';
import { SearchIndex } from './search-index.js';
import { ftsDefinition, readIndexBase, type IndexBase } from './search-index.base.js';

/** Up to this many FTS rows the base is read in place (a few ms); above, in a worker thread. */
const IN_PLACE_MAX_DOCS = 500;
/** After a failed build, searches use FTS5 this long before the next attempt. */
const RETRY_AFTER_MS = 30_000;
/** A worker build still running after this long is stopped and counts as failed (~1 s at 10,000 listings here). */
const BUILD_TIMEOUT_MS = 120_000;

class IndexOwner {
  readonly #sqlite: Sqlite.Database;
  #index: SearchIndex | undefined;
  #worker: Worker | null = null;
  #retryAt = 0;
  #closed = false;
  /** A failed build is logged once, until a build succeeds again: retries every 30 s would repeat it. */
  #failureLogged = false;
  readonly #log: Logger;

  constructor(sqlite: Sqlite.Database, log: Logger) {
    this.#sqlite = sqlite;
    this.#log = log;
  }

  /** The index when it can answer now; otherwise undefined (and a build under way). */
  current(): SearchIndex | undefined {
    const index = this.#index;
    if (index && !index.stale) {
      // A base with many listings changed since it is rebuilt in the background while it keeps answering.
      if (index.wantsCompaction && this.#canBuild()) this.#build();
      return this.#index;
    }
    if (this.#canBuild()) this.#build();
    return this.#index && !this.#index.stale ? this.#index : undefined;
  }

  #canBuild(): boolean {
    return !this.#worker && !this.#closed && Date.now() >= this.#retryAt && !this.#sqlite.inTransaction;
  }

  /** Starts a build; one that fails (in place or in the worker) leaves searches to FTS5 until RETRY_AFTER_MS. */
  #build(): void {
    try {
      this.#start();
    } catch (err) {
      this.#failed(err);
    }
  }

  #failed(err: unknown): void {
    this.#retryAt = Date.now() + RETRY_AFTER_MS;
    if (this.#failureLogged || this.#closed) return;
    this.#failureLogged = true;
    this.#log.warn('search index build failed; searches use FTS5 until a retry succeeds', {
      err: err instanceof Error ? err : String(err),
      retry_in_ms: RETRY_AFTER_MS,
    });
  }

  #built(index: SearchIndex): void {
    this.#index = index;
    this.#failureLogged = false;
  }

  #start(): void {
    const docs = Number(this.#sqlite.prepare('SELECT count(*) FROM apis_fts_docsize').pluck().get());
    if (this.#sqlite.memory || docs <= IN_PLACE_MAX_DOCS) {
      this.#built(this.#make(readIndexBase(this.#sqlite)));
      return;
    }
    const worker = new Worker(workerScript('catalog/search-index.worker.js'), {
      workerData: { file: this.#sqlite.name },
    });
    this.#worker = worker;
    worker.unref();
    const timeout = setTimeout(() => {
      this.#failed(new Error(`the index worker did not finish in ${BUILD_TIMEOUT_MS} ms`));
      void worker.terminate();
    }, BUILD_TIMEOUT_MS).unref();
    worker.once('message', (base: IndexBase) => {
      try {
        if (!this.#closed) this.#built(this.#make(base));
      } catch (err) {
        this.#failed(err);
      }
    });
    worker.once('error', (err) => this.#failed(err));
    worker.once('exit', () => {
      clearTimeout(timeout);
      if (this.#worker === worker) this.#worker = null;
    });
  }

  #make(base: IndexBase): SearchIndex {
    return new SearchIndex(this.#sqlite, base, ftsDefinition(this.#sqlite));
  }

  close(): void {
    this.#closed = true;
    void this.#worker?.terminate();
  }
}

const owners = new WeakMap<Db, IndexOwner>();

/** Gives `db` an in-memory search index; returns what releases it. */
export function attachSearchIndex(db: Db, sqlite: Sqlite.Database, log: Logger): () => void {
  const owner = new IndexOwner(sqlite, log);
  owners.set(db, owner);
  return () => {
    owner.close();
    owners.delete(db);
  };
}

/** `db`'s search index when one is attached and can answer now. */
export function searchIndexOf(db: Db): SearchIndex | undefined {
  return owners.get(db)?.current();
}

/** Starts building `ctx`'s index when the process starts, so the first searches need not wait for it. */
export function searchIndexWarmUp(ctx: { db: Db }): () => void {
  searchIndexOf(ctx.db);
  return () => {};
}
