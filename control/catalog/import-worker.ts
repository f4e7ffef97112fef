/** Worker-thread entry of the import pool: runs the jobs it is sent, one at a time, and posts each result. */
import { parentPort } from 'node:worker_threads';
import { SvcError } from '../../core/errors.js';
import { runImportJob, type ImportJob, type ImportJobResult } from './import-job.js';

export type WorkerReply =
  | { ok: true; result: ImportJobResult }
  | { ok: false; code: SvcError['code']; detail: string; extra: Record<string, unknown> | undefined };

parentPort!.on('message', (job: ImportJob) => {
  runImportJob(job).then(
    (result) => parentPort!.postMessage({ ok: true, result } satisfies WorkerReply),
    (e: unknown) =>
      parentPort!.postMessage(
        (e instanceof SvcError
          ? { ok: false, code: e.code, detail: e.detail, extra: e.extra }
          : {
              ok: false,
              code: 'import_failed',
              detail: `The import failed: ${(e as Error).message.slice(0, 300)}`,
              extra: undefined,
            }) satisfies WorkerReply,
      ),
  );
});
