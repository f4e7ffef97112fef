/**
 * Starts the compiled gateway (dist/gateway/main.js) as a real process over a test data dir and waits for its
 * ready line. With `workers > 1` the gateway supervises N worker processes, one port each: see `urls`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT, baseEnv, type RunningProcess } from './processes.js';

export interface RunningGateway extends RunningProcess {
  /** One URL per worker process (a single entry with one worker). */
  urls: string[];
  /** Worker pids (the gateway's own pid with one worker). */
  workerPids: number[];
}

export async function startGateway(dataDir: string, env: Record<string, string> = {}, opts: { workers?: number; timeoutMs?: number } = {}): Promise<RunningGateway> {
  const full = baseEnv(dataDir, { SVC_GATEWAY_WORKERS: String(opts.workers ?? 1), ...env });
  // SVC_GATEWAY_EXEC_ARGV: extra node flags for the gateway process (e.g. --cpu-prof when profiling).
  const execArgv = (env.SVC_GATEWAY_EXEC_ARGV ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...execArgv, join(ROOT, 'dist', 'gateway/main.js')], { env: full, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    err += d;
  });
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const ready = await new Promise<{ url: string; port: number; urls?: string[]; workers?: number[] }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not become ready in ${timeoutMs} ms\n${err}`)), timeoutMs);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { ready?: string; url?: string; port?: number; urls?: string[]; workers?: number[] };
        if (msg.ready === 'gateway' && msg.url && msg.port !== undefined) {
          clearTimeout(timer);
          resolve(msg as { url: string; port: number; urls?: string[]; workers?: number[] });
        }
      } catch {
        /* not the ready line */
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before ready\n${err}`));
    });
  });
  return {
    name: 'gateway',
    url: ready.url,
    port: ready.port,
    urls: ready.urls ?? [ready.url],
    workerPids: ready.workers ?? [child.pid!],
    child,
    stderr: () => err,
    stop: (signal: NodeJS.Signals = 'SIGTERM') =>
      new Promise((res) => {
        if (child.exitCode !== null || child.signalCode !== null) return res(child.exitCode);
        child.once('exit', (code) => res(code));
        child.kill(signal);
      }),
  };
}
