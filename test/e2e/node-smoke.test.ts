/**
 * The "done when" on another Node (.ci/run: Node 24 in its full pass, Node 26 on its own): with that Node
 * first on PATH, `npm start` in a tree installed for it starts every process, and a newcomer's paid call through the
 * gateway is charged. SVC_TEST_SMOKE_NODE names the node binary, SVC_TEST_SMOKE_ROOT the tree (.ci/make-tree.sh:
 * this checkout's npm ci tree with better-sqlite3 built from source for that Node, which is what `npm install` does
 * there); skipped without. `npm` itself is this machine's npm CLI, run by whichever `node` is first on PATH, as for a
 * person who installed that Node.
 */
import { describe, expect, it } from 'vitest';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { baseEnv, tempDataDir } from '../helpers/processes.js';
import { call } from '../helpers/http.js';

const run = promisify(execFile);
const NODE = process.env.SVC_TEST_SMOKE_NODE;
const TREE = process.env.SVC_TEST_SMOKE_ROOT;

describe.skipIf(!NODE || !TREE)(`npm start on Node ${NODE ? 'from SVC_TEST_SMOKE_NODE' : '(not set)'}`, () => {
  it('starts every process and charges a paid call through the gateway', async () => {
    const node = NODE!;
    const tree = TREE!;
    const { stdout: version } = await run(node, ['-v']);
    const data = tempDataDir();
    // That Node first on PATH: `npm` (a `#!/usr/bin/env node` script) and the `node` of the start script are it.
    const env = baseEnv(data.dir, {
      SVC_DEMO: 'true',
      SVC_LOG_LEVEL: 'info',
      PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`,
    });
    const child = spawn('npm', ['start', '--silent'], { cwd: tree, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const urls = await new Promise<Record<string, string>>((resolve, reject) => {
      const found: Record<string, string> = {};
      // Four processes start (each about a CPU-second): generous for a loaded 2-core CI machine.
      const timer = setTimeout(() => reject(new Error(`supervisor not ready on ${version}:\n${err}`)), 90_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        const m = /^\s+(control plane|gateway|MCP)\s+(http:\/\/[0-9.:]+)/.exec(line);
        if (m) found[m[1]!] = m[2]!;
        if (line.startsWith('Ctrl-C')) {
          clearTimeout(timer);
          resolve(found);
        }
      });
      child.once('exit', (code) => reject(new Error(`npm start exited ${code} on ${version}:\n${err}`)));
    });
    try {
      const control = urls['control plane']!;
      const gateway = urls.gateway!;
      expect((await call(urls.MCP!, 'GET', '/healthz')).body).toMatchObject({ ok: true });
      const health = (await call(gateway, 'GET', '/healthz')).body as { server: string; pid: number };
      // The one startup line names the server that runs, with why and what it costs.
      // It names the Node it runs on: the one first on PATH, that `npm start`'s `node` resolved to.
      const line = err.split('\n').find((l) => l.includes('"http server: '));
      expect(line, err).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ server: health.server, node: version.trim().slice(1) });
      // And the SQLite build that Node runs: the prebuilt Node-API one wherever Node-API 10 is there (22.14+, 24,
      // 26), so nothing is compiled at install and nodejs/node#65446 cannot abort it (core/db/sqlite-driver.ts).
      const { stdout: napi } = await run(node, ['-p', 'process.versions.napi']);
      expect(JSON.parse(line!).sqlite).toMatch(
        Number(napi) >= 10 ? /^better-sqlite3-napi@13\./ : /^better-sqlite3@12\./,
      );

      const reg = await call(control, 'POST', '/v1/register');
      const key = reg.body.api_key as string;
      expect((await call(gateway, 'GET', '/demo-weather/forecast?city=lisbon', { token: key })).status).toBe(402);
      await run(
        node,
        [join(tree, 'dist/control/admin/main.js'), 'credits', 'grant', reg.body.org_id, '10', '--reason', 'smoke'],
        { env },
      );
      let paid = await call(gateway, 'GET', '/demo-weather/forecast?city=lisbon', { token: key });
      for (let i = 0; i < 40 && paid.status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        paid = await call(gateway, 'GET', '/demo-weather/forecast?city=lisbon', { token: key });
      }
      expect(paid.status).toBe(200);
      const charged = Number(paid.headers.get('x-svc-charged-cents'));
      expect(charged).toBeGreaterThan(0);
      // The charge is on the books: the balance the control plane reports went down by exactly that.
      let credit = -1;
      for (let i = 0; i < 40; i++) {
        const b = await call(control, 'GET', '/v1/billing/balance', { token: key });
        credit = b.body.credit_cents as number;
        if (credit === 10 - charged) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(credit).toBe(10 - charged);
    } finally {
      const code = await new Promise<number | null>((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', (c) => resolve(c));
        child.kill('SIGTERM');
      });
      expect(code).toBe(0);
      data.cleanup();
    }
  }, 180_000);
});
