/**
 * Added-latency phase: everything moved onto one core (upstream, proxies, wrk), one connection (`wrk -c1`),
 * so the numbers are the proxy's own work per request, not queueing; compared per round with the upstream direct.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { processTree } from './procs.js';
import { ROOT } from './setup.js';
import type { Target, TargetId } from './targets.js';
import { eldDelay, eldSnapshot } from './eld.js';

export interface WrkResult {
  requests: number;
  durationUs: number;
  statusErrors: number;
  connectErrors: number;
  readErrors: number;
  timeouts: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  p999Us: number;
  meanUs: number;
  maxUs: number;
}

export interface LatencyRun {
  round: number;
  target: TargetId;
  wrk: WrkResult;
  /** The gateway's event-loop delay during this one-connection run (stalls show here even without load). */
  eld: { p999Ms: number; maxMs: number } | null;
}

/** Moves every thread of each process (and its children) onto `cpus`. */
export function repin(pids: number[], cpus: string): void {
  for (const root of pids)
    for (const p of processTree(root)) spawnSync('taskset', ['-a', '-p', '-c', cpus, String(p)], { stdio: 'ignore' });
}

/** `wrk` pinned to `cpus`, one connection on one thread unless `load` says otherwise; exact percentiles via latency.lua. */
export function runWrk(
  wrkBin: string,
  t: Pick<Target, 'url' | 'headers'>,
  seconds: number,
  cpus: string,
  load: { threads: number; connections: number } = { threads: 1, connections: 1 },
): Promise<WrkResult> {
  const headerArgs = Object.entries(t.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const args = [
    '-c',
    cpus,
    wrkBin,
    `-t${load.threads}`,
    `-c${load.connections}`,
    `-d${seconds}s`,
    '--timeout',
    '2s',
    '-s',
    join(ROOT, 'bench', 'latency.lua'),
    ...headerArgs,
    t.url,
  ];
  return new Promise((res, rej) => {
    const child = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), (seconds + 30) * 1000);
    child.once('exit', (code) => {
      clearTimeout(kill);
      const line = out.split('\n').find((l) => l.startsWith('{"requests"'));
      if (!line) return rej(new Error(`wrk exited ${code}: ${err.slice(-300)} ${out.slice(-300)}`));
      res(JSON.parse(line) as WrkResult);
    });
  });
}

export async function runLatency(
  wrkBin: string,
  targets: Target[],
  o: { rounds: number; seconds: number; cpus: string; eldDir: string },
  log: (s: string) => void,
): Promise<LatencyRun[]> {
  const runs: LatencyRun[] = [];
  for (let r = 0; r < o.rounds; r++) {
    for (let i = 0; i < targets.length; i++) {
      const t = targets[(i + r) % targets.length]!;
      if (t.eld) await eldSnapshot(o.eldDir, t.sut.pid);
      const wrk = await runWrk(wrkBin, t, o.seconds, o.cpus);
      const snap = t.eld ? await eldSnapshot(o.eldDir, t.sut.pid) : null;
      const eld = snap ? { p999Ms: eldDelay(snap.p999Ms), maxMs: eldDelay(snap.maxMs) } : null;
      runs.push({ round: r + 1, target: t.id, wrk, eld });
      const bad = wrk.statusErrors + wrk.connectErrors + wrk.readErrors + wrk.timeouts;
      log(
        `latency round ${r + 1} ${t.id.padEnd(11)} p50 ${wrk.p50Us} µs  p99 ${wrk.p99Us} µs  p99.9 ${wrk.p999Us} µs  (${wrk.requests} req)` +
          (eld ? `  loop delay p99.9 ${eld.p999Ms.toFixed(2)} ms, max ${eld.maxMs.toFixed(2)} ms` : '') +
          (bad ? `  ERRORS ${bad}` : ''),
      );
    }
  }
  return runs;
}
