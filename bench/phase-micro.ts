/**
 * Micro-benchmark phase: key auth and the settle (ledger) writer, each in its own process pinned to the
 * server core, reading the compiled gateway modules; a missing or changed module is reported, not fatal.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './setup.js';
import type { KeyAuthResult } from './micro/key-auth.bench.js';
import type { LedgerResult } from './micro/ledger-writer.bench.js';
import type { PgWriterResult } from './micro/pg-writer.bench.js';
import type { MetricsCostResult } from './micro/metrics.bench.js';
import type { WalFramesResult } from './micro/wal-frames.bench.js';
import type { UsageRowBytes } from './micro/usage-row-bytes.bench.js';

export interface MicroResults {
  keyAuth?: KeyAuthResult;
  ledger?: LedgerResult;
  /** Short runs at other batch sizes: how the rate depends on how many settles share a commit. */
  ledgerSweep?: LedgerResult[];
  /** A short run at the paid runs' own calls per commit (Summary cpuCost.paidCallsPerCommit): the settle's CPU there. */
  ledgerAtPaidBatch?: LedgerResult;
  /** The same settles on PostgreSQL (gateway/pg/settle-writer.ts): three gateway writers, one PostgreSQL. */
  pgWriter?: PgWriterResult;
  /** CPU that gateway metrics add to one paid call (target <= 2 µs). */
  metricsCost?: MetricsCostResult;
  /** WAL frames (pages) per settle commit by calls per commit, beside the commit floor's (issue 28 latency). */
  walFrames?: WalFramesResult;
  /** Bytes per call of the usage row before and after 0022_narrow_usage (issue 28 item 1). */
  usageRowBytes?: UsageRowBytes;
}

function _runJson<T>(script: string, args: string[], cpus: string, timeoutSec: number): Promise<T> {
  return new Promise((res, rej) => {
    const child = spawn(
      'taskset',
      ['-c', cpus, process.execPath, join(ROOT, 'dist', 'bench', 'micro', script), ...args],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), timeoutSec * 1000);
    child.once('exit', (code) => {
      clearTimeout(kill);
      try {
        res(JSON.parse(out.trim().split('\n').pop() ?? '') as T);
      } catch {
        rej(new Error(`${script} exited ${code}: ${err.slice(-500)}`));
      }
    });
  });
}

export async function runMicro(
  o: { authOps: number; ledgerSec: number; sweep: boolean; cpus: string; paidBatch?: number | null },
  log: (s: string) => void,
): Promise<MicroResults> {
  const out: MicroResults = {};
  try {
    out.metricsCost = await _runJson<MetricsCostResult>('metrics.bench.js', ['2000000'], o.cpus, 120);
    log(
      `gateway metrics: +${out.metricsCost.addedUs} µs CPU per paid call (${out.metricsCost.onUs} with, ${out.metricsCost.offUs} without; target <= 2 µs)`,
    );
  } catch (e) {
    log(`gateway metrics: ERROR ${(e as Error).message}`);
  }
  try {
    out.keyAuth = await _runJson<KeyAuthResult>('key-auth.bench.js', [String(o.authOps)], o.cpus, 120);
    log(
      out.keyAuth.error
        ? `key auth: ERROR ${out.keyAuth.error}`
        : `key auth: ${out.keyAuth.usPerOp} µs/op wall, ${out.keyAuth.cpuUsPerOp} µs/op CPU (sha256 alone ${out.keyAuth.sha256UsPerOp} µs) over ${out.keyAuth.ops} ops`,
    );
  } catch (e) {
    out.keyAuth = {
      usPerOp: NaN,
      cpuUsPerOp: NaN,
      ops: 0,
      sha256UsPerOp: NaN,
      keysInCache: 0,
      error: (e as Error).message,
    };
    log(`key auth: ERROR ${out.keyAuth.error}`);
  }
  const ledger = async (sec: number, batch: number): Promise<LedgerResult> => {
    try {
      const r = await _runJson<LedgerResult>('ledger-writer.bench.js', [String(sec), String(batch)], o.cpus, sec + 120);
      log(
        r.error
          ? `ledger writer: ERROR ${r.error}`
          : `ledger writer (batch ${batch}, ${r.seconds} s): ${r.rowsPerSec} rows/s (${r.rowsPerCpuSec} per CPU-second), slowest second ${r.minWindowRowsPerSec}, ` +
              `${r.checkpoints} checkpoints (max ${r.checkpointMsMax} ms), WAL max ${(r.walMaxBytes / 1e6).toFixed(1)} MB, consistent=${r.consistent}`,
      );
      return r;
    } catch (e) {
      log(`ledger writer: ERROR ${(e as Error).message}`);
      return {
        rowsPerSec: NaN,
        minWindowRowsPerSec: NaN,
        rowsPerCpuSec: NaN,
        rows: 0,
        appendedRowsPerSec: NaN,
        appendedPerSettle: NaN,
        calibrationInsertUs: NaN,
        seconds: sec,
        batch,
        checkpoints: 0,
        checkpointMsMax: 0,
        walMaxBytes: 0,
        consistent: false,
        error: (e as Error).message,
      };
    }
  };
  try {
    out.walFrames = await _runJson<WalFramesResult>('wal-frames.bench.js', [], o.cpus, 120);
    const w = out.walFrames;
    log(
      w.error
        ? `WAL frames: ERROR ${w.error}`
        : `WAL frames per commit: ${w.settle.map((x) => `${x.calls} call(s) ${x.frames}`).join(', ')}; commit floor ${w.commitFloorFrames}`,
    );
  } catch (e) {
    log(`WAL frames: ERROR ${(e as Error).message}`);
  }
  try {
    out.usageRowBytes = await _runJson<UsageRowBytes>('usage-row-bytes.bench.js', ['100000'], o.cpus, 300);
    const u = out.usageRowBytes;
    log(`usage row: ${u.before.pagesBytesPerCall} → ${u.after.pagesBytesPerCall} page bytes per call`);
  } catch (e) {
    log(`usage row bytes: ERROR ${(e as Error).message}`);
  }
  out.ledger = await ledger(o.ledgerSec, 128);
  if (o.sweep) out.ledgerSweep = [await ledger(5, 16), await ledger(5, 512)];
  if (o.paidBatch) out.ledgerAtPaidBatch = await ledger(5, Math.max(1, Math.round(o.paidBatch)));
  // PostgreSQL and its three writers need both cores (not pinned to the server core).
  const pgSec = Math.min(o.ledgerSec, 15);
  try {
    out.pgWriter = await _runJson<PgWriterResult>(
      'pg-writer.bench.js',
      [String(pgSec), '3', '256'],
      '0,1',
      pgSec + 120,
    );
    const p = out.pgWriter;
    log(
      p.error
        ? `PostgreSQL writer: ${p.error}`
        : `PostgreSQL writer (3 writers): ${p.settlesPerSec} settles/s, writer CPU ${p.writerCpuUsPerSettle} µs/settle, PostgreSQL CPU ${p.pgCpuUsPerSettle} µs/settle, consistent=${p.consistent}`,
    );
  } catch (e) {
    log(`PostgreSQL writer: ERROR ${(e as Error).message}`);
    out.pgWriter = { writers: 3, outstanding: 256, seconds: pgSec, settlesPerSec: null, error: (e as Error).message };
  }
  return out;
}
