import { describe, expect, it } from 'vitest';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT, baseEnv, tempDataDir } from '../helpers/processes.js';
import { call } from '../helpers/http.js';

/** Starts a supervisor command and waits for the addresses its banner prints. */
async function startSupervisor(
  argv: string[],
  dataDir: string,
): Promise<{ child: ChildProcessWithoutNullStreams; urls: Record<string, string> }> {
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env: baseEnv(dataDir, { SVC_DEMO: 'false' }) });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const urls = await new Promise<Record<string, string>>((resolve, reject) => {
    const found: Record<string, string> = {};
    const timer = setTimeout(() => reject(new Error(`supervisor not ready:\n${err}`)), 30_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^\s+(control plane|gateway|MCP)\s+(http:\/\/[0-9.:]+)/.exec(line);
      if (m) found[m[1]!] = m[2]!;
      if (line.startsWith('Ctrl-C')) {
        clearTimeout(timer);
        resolve(found);
      }
    });
  });
  return { child, urls };
}

/** Waits until none of the addresses answers any more (bounded). */
async function allClosed(urls: Record<string, string>, withinMs: number): Promise<string[]> {
  const deadline = Date.now() + withinMs;
  let open: string[] = Object.values(urls);
  while (open.length > 0 && Date.now() < deadline) {
    const still: string[] = [];
    for (const url of open)
      if (
        await fetch(url + '/healthz').then(
          () => true,
          () => false,
        )
      )
        still.push(url);
    open = still;
    if (open.length > 0) await new Promise((r) => setTimeout(r, 250));
  }
  return open;
}

/** `npm start` is `node dist/scripts/start.js`: the supervisor of control, gateway and MCP (and the demo upstream). */
describe('npm start', () => {
  it('runs control, gateway and MCP on one SQLite file, each answering /healthz, and stops them all on SIGTERM', async () => {
    const data = tempDataDir();
    const { child, urls } = await startSupervisor([process.execPath, join(ROOT, 'dist/scripts/start.js')], data.dir);
    try {
      expect((await call(urls['control plane']!, 'GET', '/healthz')).body).toMatchObject({
        ok: true,
        process: 'control',
      });
      expect((await call(urls.gateway!, 'GET', '/healthz')).status).toBe(200);
      // The web pages are served by the control plane at its root.
      for (const page of ['/', '/catalog', '/login', '/market', '/leaderboards', '/providers', '/activity'])
        expect({ page, status: (await fetch(urls['control plane']! + page)).status }).toEqual({ page, status: 200 });
      expect((await call(urls.MCP!, 'GET', '/healthz')).body).toMatchObject({ ok: true, process: 'mcp' });
      // One shared file: a key registered on the control plane is known to the gateway (401 would mean unknown).
      const reg = (await call(urls['control plane']!, 'POST', '/v1/register')).body;
      const viaGateway = await call(urls.gateway!, 'GET', '/no-such-listing/x', { token: reg.api_key });
      expect(viaGateway.status).toBe(404);
    } finally {
      const code = await new Promise<number | null>((resolve) => {
        child.once('exit', (c) => resolve(c));
        child.kill('SIGTERM');
      });
      expect(code).toBe(0);
      for (const url of Object.values(urls)) await expect(fetch(url + '/healthz')).rejects.toThrow();
      data.cleanup();
    }
    // The readiness wait above is 30 s, as is vitest's default test timeout: on a loaded CI machine a slow (but
    // successful) start of four processes left no time for the calls and the SIGTERM, and a stuck start timed out
    // before its own 'supervisor not ready' error could say so.
  }, 60_000);

  // `kill <npm pid>` used to end npm and its `sh -c` while the supervisor and every child kept serving.
  it('stops every process when the npm process itself gets SIGTERM, or is killed outright', async () => {
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const data = tempDataDir();
      const { child, urls } = await startSupervisor(['npm', 'start', '--silent'], data.dir);
      try {
        expect((await call(urls.gateway!, 'GET', '/healthz')).status).toBe(200);
        child.kill(signal);
        expect({ signal, open: await allClosed(urls, 15_000) }).toEqual({ signal, open: [] });
      } finally {
        data.cleanup();
      }
    }
  }, 120_000);

  it('children stop by themselves when the supervisor is killed outright', async () => {
    const data = tempDataDir();
    const { child, urls } = await startSupervisor([process.execPath, join(ROOT, 'dist/scripts/start.js')], data.dir);
    try {
      child.kill('SIGKILL');
      expect(await allClosed(urls, 15_000)).toEqual([]);
    } finally {
      data.cleanup();
    }
  }, 60_000);
});
