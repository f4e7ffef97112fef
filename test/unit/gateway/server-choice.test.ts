import { afterEach, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { chooseServer, probeNative, serverFor } from '../../../gateway/server-choice.js';
import { FALLBACK_SHARES_PORT } from '../../../gateway/http-fallback.js';
import { EXPECTED_SERVER } from '../../helpers/gateway.js';
import { ROOT } from '../../helpers/processes.js';
import { sqliteDriver } from '../../../core/db/sqlite-driver.js';

const run = promisify(execFile);
const saved = process.env.UWS_USE_FALLBACK;
afterEach(() => {
  if (saved === undefined) delete process.env.UWS_USE_FALLBACK;
  else process.env.UWS_USE_FALLBACK = saved;
});

describe('gateway HTTP server choice', () => {
  it('fallback is taken when asked, with no native build loaded', () => {
    const c = chooseServer('fallback', 8192);
    expect(c).not.toBeInstanceOf(Error);
    expect(c).toMatchObject({ kind: 'fallback', why: 'SVC_GATEWAY_SERVER=fallback', attempts: [] });
    // uWS reads its header cap from the environment when it loads; the fallback reads the same variable.
    expect(process.env.UWS_HTTP_MAX_HEADERS_SIZE).toBe(String(64 * 1024));
  });

  it('auto picks the server this run expects, and says why', () => {
    const c = chooseServer('auto', 8192);
    if (c instanceof Error) throw c;
    expect(c.kind).toBe(EXPECTED_SERVER);
    if (c.kind === 'native') expect(c.build).toMatch(/uws_[a-z0-9]+_[a-z0-9]+_\d+\.node/);
    else expect(c.why).toMatch(/^no native uWS build loads \(/);
  });

  it('with UWS_USE_FALLBACK, auto runs the fallback and native refuses, saying what would make a build load', () => {
    process.env.UWS_USE_FALLBACK = '1';
    const attempts = probeNative({ all: true }).attempts;
    expect(attempts.map((a) => a.loaded)).toEqual([false, false]);
    expect(chooseServer('auto', 8192)).toMatchObject({
      kind: 'fallback',
      why: expect.stringContaining('UWS_USE_FALLBACK is set'),
    });
    const refused = chooseServer('native', 8192);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/no native uWS build loads here .*What would: unset UWS_USE_FALLBACK/);
  });

  it('several fallback workers are refused where node:net cannot share a port', () => {
    const c = serverFor('fallback', 8192, 2);
    if (FALLBACK_SHARES_PORT) expect(c).toMatchObject({ kind: 'fallback' });
    else expect((c as Error).message).toMatch(/needs Node >= 22.12 to share one port between 2 workers/);
  });

  it('npm run doctor prints Node, libc, the server the gateway runs, better-sqlite3 and the data dir', async () => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'dist/scripts/doctor.js')], {
      env: { PATH: process.env.PATH ?? '', SVC_DATA_DIR: join(tmpdir(), 'svc-doctor-test') },
    });
    expect(stdout).toContain(`node:           ${process.versions.node} (ABI ${process.versions.modules}`);
    expect(stdout).toMatch(/^libc: +\S/m);
    expect(stdout).toMatch(new RegExp(`^gateway server: ${EXPECTED_SERVER}`, 'm'));
    expect(stdout).toContain(`better-sqlite3: ${sqliteDriver.version} loads`);
    expect(stdout).toContain(`[${sqliteDriver.pkg}]`);
    expect(stdout).toMatch(/^data dir: .*\(writable\)$/m);
    expect(stdout).toMatch(/^result: +ok/m);
  });

  // The README's "Node versions" table is a promise per Node and platform; the doctor reports what this one gets.
  // Run on every Node CI uses (20 here: native uWS 20.30; 24: the fallback, glibc 2.36; Debian 13's 24: native
  // uWS 20.57 in scripts/debian13-native.sh), this keeps the table's cells for those machines true.
  it("the README's Node table says what npm run doctor prints for this Node, platform and libc", async () => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'dist/scripts/doctor.js')], {
      env: { PATH: process.env.PATH ?? '', SVC_DATA_DIR: join(tmpdir(), 'svc-doctor-test') },
    });
    const libc = /^libc: +(.+)$/m.exec(stdout)?.[1];
    const server = /^gateway server: (native|fallback)(?:[^\n]*?\(uWS v([\d.]+)\))?/m.exec(stdout);
    expect(libc, stdout).toBeDefined();
    expect(server, stdout).not.toBeNull();
    const printed = server![1] === 'native' ? `native (uWS ${server![2]})` : 'fallback';

    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Node versions'));
    const rows = section
      .split('\n')
      .filter((l) => l.startsWith('|') && !l.startsWith('|---'))
      .map((l) =>
        l
          .slice(1, -1)
          .split('|')
          .map((c) => c.trim()),
      );
    const header = rows[0]!;
    const glibc = /^glibc (\d+)\.(\d+)/.exec(libc!);
    const column = header.findIndex((h) =>
      process.platform === 'darwin' || process.platform === 'win32'
        ? h.startsWith('macOS')
        : !glibc
          ? h.includes('musl')
          : Number(glibc[1]) > 2 || Number(glibc[2]) >= 38
            ? h.includes('glibc >= 2.38')
            : h.includes('glibc 2.17-2.37'),
    );
    const major = process.versions.node.split('.')[0]!;
    const row = rows.find((r) => r[0]!.split(' ')[0] === major);
    expect(column, `no README column for ${process.platform} ${libc}`).toBeGreaterThan(0);
    expect(row, `no README row for Node ${major}`).toBeDefined();
    expect({ node: major, libc, readme: row![column] }).toEqual({ node: major, libc, readme: printed });
  });
});
