/**
 * Runs the real `svc` binary (dist/cli/main.js) as a child process with a temp HOME, and starts the whole stack
 * (`npm start`'s supervisor, with the demo listing) for it to talk to.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT, baseEnv, tempDataDir } from './processes.js';

/** The repository root, also when this helper runs compiled from dist/ (the CLI bench imports it). */
export const REPO = ROOT.endsWith(`${sep}dist`) ? dirname(ROOT) : ROOT;
export const SVC_BIN = join(REPO, 'dist/cli/main.js');

export interface SvcRun {
  code: number | null;
  stdout: string;
  stdoutBytes: Buffer;
  stderr: string;
  /** stdout parsed as the one JSON document `--json` promises. */
  json(): any;
}

export interface Stack {
  control: string;
  gateway: string;
  mcp: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

export function tempHome(): { home: string; cleanup: () => void } {
  const home = mkdtempSync(join(tmpdir(), 'svc-home-'));
  return { home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

export function runSvc(
  args: string[],
  opts: { home: string; stack?: Stack; env?: Record<string, string>; input?: string | Buffer; cwd?: string },
): Promise<SvcRun> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: opts.home,
    NO_COLOR: '1',
    ...(opts.stack
      ? { SVC_API_URL: opts.stack.control, SVC_GATEWAY_URL: opts.stack.gateway, SVC_MCP_URL: `${opts.stack.mcp}/mcp` }
      : {}),
    ...(opts.env ?? {}),
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, ...args], {
      env,
      cwd: opts.cwd ?? opts.home,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      err += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const bytes = Buffer.concat(out);
      const stdout = bytes.toString('utf8');
      resolve({
        code,
        stdout,
        stdoutBytes: bytes,
        stderr: err,
        json: () => {
          try {
            return JSON.parse(stdout);
          } catch {
            throw new Error(`stdout is not one JSON document:\n${stdout}\nstderr:\n${err}`);
          }
        },
      });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** The supervisor from `npm start` on ephemeral ports over a temp data dir; resolves with its printed URLs. */
export async function startStack(extra: Record<string, string> = {}): Promise<Stack> {
  const data = tempDataDir();
  const env = baseEnv(data.dir, { SVC_DEMO: 'true', ...extra });
  const child = spawn(process.execPath, [join(REPO, 'dist/scripts/start.js')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    err += d;
  });
  const urls = await new Promise<Record<string, string>>((resolve, reject) => {
    const found: Record<string, string> = {};
    const timer = setTimeout(() => reject(new Error(`stack not ready\n${err}`)), 45_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^\s+(control plane|gateway|MCP)\s+(http:\/\/[0-9.:]+)/.exec(line);
      if (m) found[m[1]!] = m[2]!;
      if (line.startsWith('Ctrl-C')) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.once('exit', (code) => reject(new Error(`stack exited ${code}\n${err}`)));
  });
  return {
    control: urls['control plane']!,
    gateway: urls.gateway!,
    mcp: urls.MCP!,
    env,
    async stop() {
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      data.cleanup();
    },
  };
}
