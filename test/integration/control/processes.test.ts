import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, baseEnv, startProcess, tempDataDir } from '../../helpers/processes.js';
import { openTestDb } from '../../helpers/db.js';
import { call } from '../../helpers/http.js';
import { migrations } from '../../../core/db/migrations/index.js';

describe('processes', () => {
  it('two control processes starting at once on one fresh file apply each migration exactly once', async () => {
    const data = tempDataDir();
    const env = baseEnv(data.dir);
    const [a, b] = await Promise.all([
      startProcess('control-a', 'control/main.js', env),
      startProcess('control-b', 'control/main.js', env),
    ]);
    try {
      const db = openTestDb(data.dir);
      const applied = await db.db
        .selectFrom('kysely_migration' as never)
        .select('name' as never)
        .execute();
      await db.close();
      expect(applied.map((r) => (r as { name: string }).name).sort()).toEqual(Object.keys(migrations).sort());
      for (const p of [a, b]) expect((await call(p.url, 'POST', '/v1/register')).status).toBe(201);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      data.cleanup();
    }
  });

  it('stops cleanly on SIGTERM with exit code 0', async () => {
    const data = tempDataDir();
    const p = await startProcess('control', 'control/main.js', baseEnv(data.dir));
    expect(await p.stop('SIGTERM')).toBe(0);
    data.cleanup();
  });

  it('refuses to start on a bad setting and names every bad variable', () => {
    const data = tempDataDir();
    const r = spawnSync(process.execPath, [join(ROOT, 'dist/control/main.js')], {
      env: { ...baseEnv(data.dir), SVC_CONTROL_PORT: 'eighty', SVC_ENV: 'staging' },
      encoding: 'utf8',
    });
    data.cleanup();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('SVC_CONTROL_PORT');
    expect(r.stderr).toContain('SVC_ENV');
  });

  it('the MCP process answers /healthz and serves protected-resource metadata', async () => {
    const data = tempDataDir();
    const p = await startProcess('mcp', 'mcp/main.js', baseEnv(data.dir));
    try {
      expect((await call(p.url, 'GET', '/healthz')).body).toEqual({ ok: true, process: 'mcp' });
      const meta = await call(p.url, 'GET', '/.well-known/oauth-protected-resource');
      expect(meta.body.resource).toMatch(/\/mcp$/);
    } finally {
      await p.stop();
      data.cleanup();
    }
  });
});
