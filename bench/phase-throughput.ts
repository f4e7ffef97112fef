/**
 * Throughput phase: every target once per round, order rotated each round, the load generator pinned beside the
 * upstream; per run: req/s, p50/p99, CPU µs per request of the server under test, core utilisation, loop delay.
 * Saturation runs use wrk (two threads): autocannon costs several times wrk's CPU per request, and on the shared core
 * it, not nginx, set nginx's throughput (issue 14). Fixed-rate runs use autocannon's `overallRate` (wrk has none).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { LoadResult, LoadSpec } from './load-worker.js';
import { cpuBusy, cpuMicros, cpuSample } from './procs.js';
import { eldDelay, eldSnapshot } from './eld.js';
import { runWrk } from './phase-latency.js';
import { ROOT } from './setup.js';
import type { Target, TargetId } from './targets.js';
import type { EldSnapshot } from './eld-probe.js';

export interface LoadRun {
  round: number;
  target: TargetId;
  load: LoadResult;
  /** Responses with the expected status (the rest are failures). */
  expected: number;
  cpuUsPerReq: number | null;
  /** CPU of the target's backing server (Target.backing) per response, apart from the server under test. */
  backingCpuUsPerReq?: number | null;
  /** Busy fraction per CPU during the run (core 0: load + upstream, core 1: server under test). */
  coreBusy: number[];
  eld: { p999Ms: number; p99Ms: number; maxMs: number; raw: EldSnapshot } | null;
  /** The same probe in an idle Node process on the server's core during this run: the machine's share of the delay. */
  eldIdle: { p999Ms: number; p99Ms: number; maxMs: number } | null;
  /** Calls per settle commit during this run (targets with Target.settleCounts). */
  callsPerCommit?: number | null;
}

export const LOAD_CPU = '0';
/** wrk threads for saturation runs, all on the load core. */
export const WRK_THREADS = 2;

/**
 * A saturation run with wrk, as a LoadResult. wrk counts only "non-2xx/3xx" responses, so a target expecting 401
 * counts those as expected (its exact status and body are checked before any load, targets.ts).
 */
async function _runWrkLoad(
  wrkBin: string,
  t: Target,
  o: { connections: number; durationSec: number },
): Promise<{ load: LoadResult; expected: number }> {
  const w = await runWrk(wrkBin, t, o.durationSec, LOAD_CPU, { threads: WRK_THREADS, connections: o.connections });
  const ok = w.requests - w.statusErrors;
  const durationSec = w.durationUs / 1e6;
  return {
    load: {
      responses: w.requests,
      rps: w.requests / durationSec,
      p50Ms: w.p50Us / 1000,
      p99Ms: w.p99Us / 1000,
      statusCounts: { '2xx/3xx': ok, 'non-2xx/3xx': w.statusErrors },
      errors: w.connectErrors + w.readErrors + w.timeouts,
      timeouts: w.timeouts,
      durationSec,
    },
    expected: t.expectStatus < 400 ? ok : w.statusErrors,
  };
}

export function runLoadWorker(spec: LoadSpec, cpus = LOAD_CPU): Promise<LoadResult> {
  return new Promise((res, rej) => {
    const child = spawn(
      'taskset',
      ['-c', cpus, process.execPath, join(ROOT, 'dist', 'bench', 'load-worker.js'), JSON.stringify(spec)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    // Bounded: autocannon stops itself after durationSec; this is the backstop.
    const kill = setTimeout(() => child.kill('SIGKILL'), (spec.durationSec + 30) * 1000);
    child.once('exit', (code) => {
      clearTimeout(kill);
      try {
        res(JSON.parse(out.trim().split('\n').pop() ?? '') as LoadResult);
      } catch {
        rej(new Error(`load worker exited ${code}: ${err.slice(-500)}`));
      }
    });
  });
}

export async function runThroughput(
  targets: Target[],
  o: {
    rounds: number;
    durationSec: number;
    connections: number;
    eldDir: string;
    idlePid: number | null;
    rate?: number;
    /** wrk's path: saturation runs use it when given (autocannon otherwise). */
    wrk?: string | null;
  },
  log: (s: string) => void,
): Promise<LoadRun[]> {
  const runs: LoadRun[] = [];
  for (let r = 0; r < o.rounds; r++) {
    for (let i = 0; i < targets.length; i++) {
      const t = targets[(i + r) % targets.length]!;
      if (t.eld) await eldSnapshot(o.eldDir, t.sut.pid);
      if (o.idlePid !== null) await eldSnapshot(o.eldDir, o.idlePid);
      // Read outside the CPU window: the count is the bench's own read, not the server's work.
      const settled0 = t.settleCounts?.();
      const cpu0 = cpuMicros(t.sut.pid);
      const backing0 = t.backing ? cpuMicros(t.backing.pid) : 0;
      const s0 = cpuSample();
      let load: LoadResult;
      let expected: number;
      if (o.wrk && !o.rate) ({ load, expected } = await _runWrkLoad(o.wrk, t, o));
      else {
        load = await runLoadWorker({
          url: t.url,
          connections: o.connections,
          durationSec: o.durationSec,
          headers: t.headers,
          ...(o.rate ? { rate: o.rate } : {}),
        });
        expected = load.statusCounts[String(t.expectStatus)] ?? 0;
      }
      const s1 = cpuSample();
      const cpu1 = cpuMicros(t.sut.pid);
      const backing1 = t.backing ? cpuMicros(t.backing.pid) : 0;
      const settled1 = t.settleCounts?.();
      const snap = t.eld ? await eldSnapshot(o.eldDir, t.sut.pid) : null;
      const idle = o.idlePid !== null ? await eldSnapshot(o.eldDir, o.idlePid) : null;
      const run: LoadRun = {
        round: r + 1,
        target: t.id,
        load,
        expected,
        cpuUsPerReq: load.responses > 0 ? (cpu1 - cpu0) / load.responses : null,
        ...(t.backing
          ? { backingCpuUsPerReq: load.responses > 0 ? (backing1 - backing0) / load.responses : null }
          : {}),
        coreBusy: cpuBusy(s0, s1),
        eld: snap
          ? { p999Ms: eldDelay(snap.p999Ms), p99Ms: eldDelay(snap.p99Ms), maxMs: eldDelay(snap.maxMs), raw: snap }
          : null,
        eldIdle: idle
          ? { p999Ms: eldDelay(idle.p999Ms), p99Ms: eldDelay(idle.p99Ms), maxMs: eldDelay(idle.maxMs) }
          : null,
        ...(settled0 && settled1
          ? {
              callsPerCommit:
                settled1.commits > settled0.commits
                  ? (settled1.calls - settled0.calls) / (settled1.commits - settled0.commits)
                  : null,
            }
          : {}),
      };
      runs.push(run);
      const bad = load.responses - expected + load.errors;
      log(
        `${o.rate ? `fixed ${o.rate}/s ` : ''}round ${r + 1} ${t.id.padEnd(11)} ${Math.round(load.rps).toString().padStart(6)} req/s  p50 ${load.p50Ms} ms p99 ${load.p99Ms} ms  ` +
          `cpu ${run.cpuUsPerReq?.toFixed(1)} µs/req  cores ${run.coreBusy.map((b) => Math.round(b * 100) + '%').join('/')}` +
          (run.eld ? `  eld p99.9 ${run.eld.p999Ms.toFixed(2)} ms` : '') +
          (run.eldIdle ? ` (idle ${run.eldIdle.p999Ms.toFixed(2)})` : '') +
          (run.callsPerCommit ? `  ${run.callsPerCommit.toFixed(1)} calls/commit` : '') +
          (bad ? `  UNEXPECTED ${bad} (${JSON.stringify(load.statusCounts)} errors ${load.errors})` : ''),
      );
    }
  }
  return runs;
}
