/**
 * `svc-admin backup create|verify|restore` (docs/operations.md "Backups"): a backup taken in the middle of a paid
 * load through the real gateway, restored into a new data dir, holds every call answered before the backup began,
 * passes the ledger check, and the control plane starts on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Sqlite from '../../../core/db/sqlite-driver.js';
import { ROOT, baseEnv, startProcess } from '../../helpers/processes.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { grantCredits, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { makeWorld, gw, type World } from '../gateway/fixture.js';

const run = promisify(execFile);
const ADMIN = join(ROOT, 'dist/control/admin/main.js');

function admin(dataDir: string, ...args: string[]) {
  return run(process.execPath, [ADMIN, ...args], { env: baseEnv(dataDir), cwd: ROOT }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

describe('backup create / verify / restore', () => {
  let w: World;
  let gateway: RunningGateway;
  let consumer: SeededOrg;
  const scratch = mkdtempSync(join(tmpdir(), 'svc-backup-'));

  beforeAll(async () => {
    w = await makeWorld();
    consumer = await seedOrg(w.h);
    await grantCredits(w.h, consumer.orgId, 100_000);
    gateway = await startGateway(w.dataDir);
  });
  afterAll(async () => {
    await gateway?.stop();
    await w?.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('takes a consistent copy during paid load; the restored copy has every earlier call and exact books', async () => {
    const answeredBefore: string[] = [];
    let backupStarted = false;
    let stop = false;
    // Four concurrent callers, bounded by count and by the stop flag.
    const caller = async () => {
      for (let i = 0; i < 400 && !stop; i++) {
        const r = await gw(gateway.url, 'GET', `/${w.slug}/users/${i}`, { key: consumer.key });
        expect(r.status).toBe(200);
        if (!backupStarted) answeredBefore.push(r.headers.get('x-svc-request-id')!);
      }
    };
    const load = Promise.all([caller(), caller(), caller(), caller()]);
    while (answeredBefore.length < 100) await new Promise((r) => setTimeout(r, 20));

    const file = join(scratch, 'mid-load.db');
    backupStarted = true;
    const before = [...answeredBefore];
    const created = await admin(w.dataDir, 'backup', 'create', file, '--json');
    expect(created.code, created.stderr).toBe(0);
    await new Promise((r) => setTimeout(r, 200)); // load keeps running after the copy
    stop = true;
    await load;

    const verified = await admin(w.dataDir, 'backup', 'verify', file, '--json');
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout).data).toMatchObject({ ok: true, integrity_ok: true, books: { ok: true } });

    // Restore into a fresh data dir (with the source's secret key, as the docs say to keep it with backups).
    const fresh = mkdtempSync(join(tmpdir(), 'svc-restored-'));
    try {
      copyFileSync(join(w.dataDir, 'secret.key'), join(fresh, 'secret.key'));
      const restored = await admin(fresh, 'backup', 'restore', file, '--json');
      expect(restored.code, restored.stderr).toBe(0);
      const copy = new Sqlite(join(fresh, 'svc.db'), { readonly: true });
      const ids = new Set(
        (copy.prepare('SELECT request_id AS id FROM usage_calls').all() as { id: string }[]).map((r) => r.id),
      );
      copy.close();
      expect(before.filter((id) => !ids.has(id))).toEqual([]);
      // svc starts on it and the books are exact there too.
      const control = await startProcess('control', 'control/main.js', baseEnv(fresh));
      try {
        const health = await fetch(`${control.url}/healthz`);
        expect(health.status).toBe(200);
      } finally {
        await control.stop();
      }
      const check = await admin(fresh, 'ledger', 'check', '--json');
      expect(check.code, check.stdout).toBe(0);
      expect(JSON.parse(check.stdout).data.ok).toBe(true);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses to restore over a data dir a running process uses, and refuses a damaged backup', async () => {
    const file = join(scratch, 'quiet.db');
    expect((await admin(w.dataDir, 'backup', 'create', file)).code).toBe(0);
    // The gateway has the data dir open.
    const busy = await admin(w.dataDir, 'backup', 'restore', file);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/in use: stop every svc process/);

    const damaged = join(scratch, 'damaged.db');
    writeFileSync(damaged, 'not a database at all, just text that is long enough to look like a header'.repeat(100));
    const bad = await admin(w.dataDir, 'backup', 'verify', damaged);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^FAILED/);
    const fresh = mkdtempSync(join(tmpdir(), 'svc-restored-'));
    try {
      const refused = await admin(fresh, 'backup', 'restore', damaged);
      expect(refused.code).toBe(1);
      expect(existsSync(join(fresh, 'svc.db'))).toBe(false);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
    // An existing file is never overwritten.
    const again = await admin(w.dataDir, 'backup', 'create', file);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists/);
  }, 60_000);
});

describe('scheduled backups', () => {
  it('writes one every SVC_BACKUP_EVERY into SVC_BACKUP_DIR and keeps the newest SVC_BACKUP_KEEP', async () => {
    const data = mkdtempSync(join(tmpdir(), 'svc-sched-'));
    const dir = join(data, 'backups');
    const control = await startProcess(
      'control',
      'control/main.js',
      baseEnv(data, { SVC_BACKUP_DIR: dir, SVC_BACKUP_EVERY: '1100ms', SVC_BACKUP_KEEP: '2' }),
    );
    const { readdirSync } = await import('node:fs');
    const seen = new Set<string>();
    try {
      const deadline = Date.now() + 20_000;
      while (seen.size < 4 && Date.now() < deadline) {
        if (existsSync(dir)) for (const f of readdirSync(dir)) if (f.endsWith('.db')) seen.add(f);
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await control.stop();
    }
    try {
      expect(seen.size).toBeGreaterThanOrEqual(4);
      const kept = readdirSync(dir).filter((f) => /^svc-\d{8}T\d{6}Z\.db$/.test(f));
      expect(kept.length).toBe(2);
      // Retention removed the oldest, never the newest (one more may have been written just before the stop).
      const oldestSeen = [...seen].sort()[0]!;
      expect(kept.sort()[0]! > oldestSeen).toBe(true);
      expect(kept.at(-1)! >= [...seen].sort().at(-1)!).toBe(true);
      const verified = await admin(data, 'backup', 'verify', join(dir, kept.at(-1)!));
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 60_000);
});
