import { describe, expect, it } from 'vitest';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT, baseEnv, tempDataDir } from '../helpers/processes.js';
import { call } from '../helpers/http.js';

const run = promisify(execFile);

/** The README's first call, on a fresh data dir with the demo listing, as a newcomer would do it. */
describe('a newcomer after npm start', () => {
  it('registers, finds the demo API, calls a free endpoint, gets 402 on a paid one, and is charged once credited', async () => {
    const data = tempDataDir();
    const env = baseEnv(data.dir, { SVC_DEMO: 'true' });
    const child = spawn(process.execPath, [join(ROOT, 'dist/scripts/start.js')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const urls = await new Promise<Record<string, string>>((resolve, reject) => {
      const found: Record<string, string> = {};
      const timer = setTimeout(() => reject(new Error('supervisor not ready')), 30_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        const m = /^\s+(control plane|gateway)\s+(http:\/\/[0-9.:]+)/.exec(line);
        if (m) found[m[1]!] = m[2]!;
        if (line.startsWith('Ctrl-C')) {
          clearTimeout(timer);
          resolve(found);
        }
      });
    });
    const control = urls['control plane']!;
    const gateway = urls.gateway!;
    try {
      const reg = await call(control, 'POST', '/v1/register');
      const key = reg.body.api_key as string;
      const search = await call(control, 'GET', '/v1/catalog/search?query=weather', { token: key });
      expect(search.body.data.map((l: { slug: string }) => l.slug)).toContain('demo-weather');

      const free = await call(gateway, 'GET', '/demo-weather/current?city=lisbon', { token: key });
      expect(free.status).toBe(200);
      expect(free.body.city).toBe('lisbon');
      expect(free.headers.get('x-svc-charged-cents')).toBe('0');

      const paid = await call(gateway, 'GET', '/demo-weather/forecast?city=lisbon', { token: key });
      expect(paid.status).toBe(402);
      expect(paid.body.code).toBe('insufficient_credits');

      await run(
        process.execPath,
        [join(ROOT, 'dist/control/admin/main.js'), 'credits', 'grant', reg.body.org_id, '10', '--reason', 'e2e'],
        { env },
      );
      let ok: Awaited<ReturnType<typeof call>> | undefined;
      for (let i = 0; i < 20; i++) {
        ok = await call(gateway, 'GET', '/demo-weather/forecast?city=lisbon', { token: key });
        if (ok.status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(ok!.status).toBe(200);
      expect(ok!.headers.get('x-svc-charged-cents')).toBe('2');
      expect((await call(control, 'GET', '/v1/billing/balance', { token: key })).body.credit_cents).toBe(8);
    } finally {
      const code = await new Promise<number | null>((resolve) => {
        child.once('exit', (c) => resolve(c));
        child.kill('SIGTERM');
      });
      expect(code).toBe(0);
      data.cleanup();
    }
    // The readiness wait above is 30 s, as is vitest's default test timeout: on a loaded CI machine a slow (but
    // successful) start of four processes left no time for the calls and the SIGTERM, and a stuck start timed out
    // before its own 'supervisor not ready' error could say so.
  }, 60_000);
});
