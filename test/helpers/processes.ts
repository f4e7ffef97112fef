/**
 * Spawns svc's real processes (compiled, from dist/) on ephemeral loopback ports and stops them after the test.
 * Each process prints one JSON line `{"ready": name, "url": ...}` on stdout when it listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { databaseUrlFor, pgTestMode } from './postgres.js';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface RunningProcess {
  name: string;
  url: string;
  port: number;
  child: ChildProcess;
  /** The whole ready line (processes may add fields, e.g. the gateway's worker pids). */
  ready: Record<string, unknown>;
  /** Everything the process wrote on stderr so far (logs, dev outbox). */
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function tempDataDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Env every test process gets: quiet, no demo seed, ephemeral ports, a temp data dir. */
export function baseEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    SVC_DATA_DIR: dataDir,
    SVC_ENV: 'development',
    SVC_DEMO: 'false',
    SVC_LOG_LEVEL: 'warn',
    SVC_CONTROL_PORT: '0',
    SVC_GATEWAY_PORT: '0',
    SVC_MCP_PORT: '0',
    SVC_DEMO_UPSTREAM_PORT: '0',
    // The PostgreSQL pass (vitest.pg.config.ts): the data dir's processes share a database of its own.
    ...(pgTestMode() ? { SVC_DATABASE_URL: databaseUrlFor(dataDir) } : {}),
    SVC_METRICS_PORT: '0',
    // Lets a whole run exercise one HTTP server (.ci/run, or SVC_GATEWAY_SERVER=fallback on Node 20).
    ...(process.env.SVC_GATEWAY_SERVER ? { SVC_GATEWAY_SERVER: process.env.SVC_GATEWAY_SERVER } : {}),
    ...extra,
  };
}

export async function startProcess(
  name: string,
  entry: string,
  env: Record<string, string>,
  opts: { timeoutMs?: number; execArgv?: string[]; netns?: string } = {},
): Promise<RunningProcess> {
  // A start costs about a CPU-second (the control plane ~2 s: module loading, migrations). On 2 cores at load 20-30
  // (CI while other jobs build, .ci/run's pass 3) a process gets a tenth of a core, so 20 s was too short there and
  // failed starts that were only slow; a start that hangs still fails, at 60 s. The PostgreSQL pass migrates a
  // fresh database at each start (transactional DDL) and had 60 s already.
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const argv = [process.execPath, ...(opts.execArgv ?? []), join(ROOT, 'dist', entry)];
  // In a network namespace (root; the multi-host test): `ip netns exec` execs node in place, so the pid is node's.
  const cmd = opts.netns ? ['ip', 'netns', 'exec', opts.netns, ...argv] : argv;
  const child = spawn(cmd[0]!, cmd.slice(1), {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    err += d;
  });
  const ready = await new Promise<{ url: string; port: number } & Record<string, unknown>>((resolveReady, reject) => {
    // A start that never got ready is killed: the test that asked for it has failed and will never stop it, and an
    // orphan left serving would load the machine for every later test.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not become ready in ${timeoutMs} ms\n${err}`));
    }, timeoutMs);
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { ready?: string; url?: string; port?: number } & Record<string, unknown>;
        if (msg.ready && msg.url && msg.port !== undefined) {
          clearTimeout(timer);
          resolveReady({ ...msg, url: msg.url, port: msg.port });
        }
      } catch {
        /* not the ready line */
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before ready\n${err}`));
    });
  });
  return {
    name,
    url: ready.url,
    port: ready.port,
    child,
    ready,
    stderr: () => err,
    stop: (signal: NodeJS.Signals = 'SIGTERM') =>
      new Promise((res) => {
        if (child.exitCode !== null || child.signalCode !== null) return res(child.exitCode);
        child.once('exit', (code) => res(code));
        child.kill(signal);
      }),
  };
}
