/**
 * Pinned child processes for the bench: spawn under `taskset`, wait for the `{"ready":...}` line, stop,
 * and read CPU time (utime+stime of the process and its descendants) from /proc.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface Pinned {
  name: string;
  pid: number;
  url: string;
  port: number;
  child: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

/** Clock ticks per second for /proc/<pid>/stat (almost always 100). */
export const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Spawns `cmd args` on the given CPU list and resolves once it prints a ready line with url and port. */
export async function startPinned(
  name: string,
  cpus: string,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 20_000,
): Promise<Pinned> {
  const child = spawn('taskset', ['-c', cpus, cmd, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    err = (err + d).slice(-20_000);
  });
  const ready = await new Promise<{ url: string; port: number }>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${name} not ready in ${timeoutMs} ms\n${err}`)), timeoutMs);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { ready?: string; url?: string; port?: number };
        if (msg.ready && msg.url && typeof msg.port === 'number') {
          clearTimeout(timer);
          res({ url: msg.url, port: msg.port });
        }
      } catch {
        /* a log line, not the ready line */
      }
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      rej(new Error(`${name} exited (${code ?? sig}) before ready\n${err}`));
    });
  });
  return {
    name,
    pid: child.pid!,
    url: ready.url,
    port: ready.port,
    child,
    stderr: () => err,
    stop: () => stopChild(child),
  };
}

export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  return new Promise((res) => {
    if (child.exitCode !== null || child.signalCode !== null) return res();
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(t);
      res();
    });
    child.kill('SIGTERM');
  });
}

/** A process and all its descendants (a gateway may run worker processes). */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    const p = out[i]!;
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const t of tasks) {
      try {
        for (const c of readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim().split(/\s+/))
          if (c) out.push(Number(c));
      } catch {
        /* thread ended */
      }
    }
  }
  return out;
}

/** utime + stime clock ticks from a /proc `stat` file (a process's, or one thread's under task/). */
function _statTicks(file: string): number {
  const stat = readFileSync(file, 'utf8');
  // Fields after the ")" of the command name: state is field 3, utime 14, stime 15.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(rest[11]) + Number(rest[12]);
}

/** utime+stime in microseconds, summed over the process tree (each /proc/<pid>/stat covers all its threads). */
export function cpuMicros(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) {
    try {
      ticks += _statTicks(`/proc/${p}/stat`);
    } catch {
      /* exited */
    }
  }
  return (ticks * 1e6) / CLK_TCK;
}

/** CPU time (user + system, µs) of a process's main thread alone: what its `--cpu-prof` profile samples. */
export function mainThreadCpuMicros(pid: number): number {
  return (_statTicks(`/proc/${pid}/task/${pid}/stat`) * 1e6) / CLK_TCK;
}

/** Busy fraction of each CPU between two /proc/stat samples: shows whether a core was saturated (or shared). */
export function cpuSample(): number[][] {
  return readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((l) => /^cpu\d+ /.test(l))
    .map((l) => l.trim().split(/\s+/).slice(1).map(Number));
}

export function cpuBusy(a: number[][], b: number[][]): number[] {
  return b.map((row, i) => {
    const prev = a[i] ?? row;
    const total = row.reduce((s, v, j) => s + v - (prev[j] ?? 0), 0);
    const idle = row[3]! - prev[3]! + (row[4]! - prev[4]!);
    return total > 0 ? Math.round((1 - idle / total) * 1000) / 1000 : 0;
  });
}
