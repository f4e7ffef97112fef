/**
 * Worker-thread entry of the import pool. A `run` is answered with the whole result, or, when the job is to be
 * stored here (`ImportPool.runAndStore`), with the parsed import minus its heavy parts (endpoints, document,
 * schema components), which the worker keeps and writes itself once
 * the control plane has created the listing and sends `store` (or forgets on `drop`).
 */
import { parentPort } from 'node:worker_threads';
import { SvcError } from '../../core/errors.js';
import {
  runImportJob,
  type HeavyParts,
  type ImportJob,
  type ImportJobResult,
  type ImportStats,
  type ParsedImport,
} from './import-job.js';
import { storeNewListing, type StoreStats, type StoreTarget } from './import-store.js';

export type ToWorker =
  | { type: 'run'; job: ImportJob; store: boolean }
  | { type: 'store'; target: StoreTarget }
  | { type: 'drop' };

export type WorkerReply =
  | { ok: true; kind: 'result'; result: ImportJobResult }
  | { ok: true; kind: 'parsed'; parsed: ParsedImport; stats: ImportStats }
  | { ok: true; kind: 'stored'; stored: StoreStats }
  | { ok: false; code: SvcError['code']; detail: string; extra: Record<string, unknown> | undefined };

/** The heavy parts of the last `run` with `store`, waiting for `store` or `drop`. */
let held: HeavyParts | null = null;

async function handle(msg: ToWorker): Promise<WorkerReply | null> {
  switch (msg.type) {
    case 'run': {
      held = null;
      const result = await runImportJob(msg.job);
      if (!msg.store) return { ok: true, kind: 'result', result };
      const { endpoints, documentGzip, components, ...api } = result.api;
      held = { endpoints, documentGzip, components };
      return { ok: true, kind: 'parsed', parsed: { ...api, endpointCount: endpoints.length }, stats: result.stats };
    }
    case 'store': {
      const parts = held;
      held = null;
      if (!parts) throw new Error('store without a parsed import');
      return { ok: true, kind: 'stored', stored: await storeNewListing(msg.target, parts) };
    }
    case 'drop':
      held = null;
      return null;
  }
}

function failure(e: unknown): WorkerReply {
  return e instanceof SvcError
    ? { ok: false, code: e.code, detail: e.detail, extra: e.extra }
    : {
        ok: false,
        code: 'import_failed',
        detail: `The import failed: ${(e as Error).message.slice(0, 300)}`,
        extra: undefined,
      };
}

parentPort!.on('message', (msg: ToWorker) => {
  handle(msg).then(
    (reply) => reply && parentPort!.postMessage(reply),
    (e: unknown) => parentPort!.postMessage(failure(e)),
  );
});
