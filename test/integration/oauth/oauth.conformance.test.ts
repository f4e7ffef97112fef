/**
 * The official MCP conformance runner's authorization-server scenarios against the real control plane. The runner
 * needs Node >= 22 (test/helpers/conformance.ts); its code-grant scenario prints an authorization URL for a
 * person to open, which the headless browser of test/helpers/oauth.ts signs in to and approves.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFORMANCE_NODE, CONFORMANCE_RUNNER as RUNNER } from '../../helpers/conformance.js';
import { Browser, authorize, discover, registerClient } from '../../helpers/oauth.js';
import { MCP_RESOURCE, newEmail, startOAuthFixture, type OAuthFixture } from './fixture.js';

let f: OAuthFixture;
beforeAll(async () => {
  if (!CONFORMANCE_NODE) return;
  f = await startOAuthFixture();
});
afterAll(() => (CONFORMANCE_NODE ? f.stop() : undefined));

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

describe.skipIf(!CONFORMANCE_NODE)('conformance runner: authorization server', () => {
  it('passes authorization-server-metadata-endpoint and authorization-code-grant', async () => {
    const control = f.h.control.url;
    const port = await freePort();
    const reg = await registerClient(await discover(control), {
      client_name: 'conformance runner',
      redirect_uris: [`http://127.0.0.1:${port}/callback`],
    });
    const out = mkdtempSync(join(tmpdir(), 'svc-conformance-'));
    const child = spawn(
      CONFORMANCE_NODE ?? 'node',
      [
        RUNNER,
        'authorization',
        '--url',
        control,
        '--client-id',
        reg.body.client_id,
        '--port',
        String(port),
        '--resource',
        MCP_RESOURCE,
        '-o',
        out,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' } },
    );
    let log = '';
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    const browser = new Browser(control);
    const email = newEmail('conformance');
    const answered: Promise<void>[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      log += line + '\n';
      const at = line.indexOf(`${control}/oauth/authorize?`);
      if (at < 0) return;
      const url = new URL(line.slice(at).trim());
      answered.push(
        authorize(browser, f.smtp, email, url.pathname + url.search).then(async (callback) => {
          await (await fetch(callback)).text();
        }),
      );
    });
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    await Promise.all(answered);
    try {
      const checks: Check[] = readdirSync(out).flatMap(
        (d) => JSON.parse(readFileSync(join(out, d, 'checks.json'), 'utf8')) as Check[],
      );
      const ids = checks.map((c) => c.id);
      expect(ids, log).toEqual(
        expect.arrayContaining([
          'authorization-server-metadata',
          'authorization-server-metadata-cimd',
          'authorization-code-grant',
        ]),
      );
      expect(
        checks.filter((c) => c.status !== 'SUCCESS'),
        log,
      ).toEqual([]);
      expect(code, log).toBe(0);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 90_000);
});
