/**
 * The operator CLI in production (issue 24 item 5): commands that send no mail do not need SVC_SMTP_URL. Before,
 * `credits grant` died with a stack trace from the mailer ("production needs SVC_SMTP_URL"). A real SQLite file,
 * the compiled admin entry point, SVC_ENV=production, no SMTP.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SeededOrg, openTestDb, seedOrg } from '../../helpers/db.js';
import { ROOT, baseEnv, tempDataDir } from '../../helpers/processes.js';

const run = promisify(execFile);
const data = tempDataDir();
const env = baseEnv(data.dir, { SVC_ENV: 'production' });
let org: SeededOrg;

async function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [join(ROOT, 'dist/control/admin/main.js'), ...args], { env });
    return { code: 0, ...r };
  } catch (e) {
    const f = e as { code: number; stdout: string; stderr: string };
    return { code: f.code, stdout: f.stdout, stderr: f.stderr };
  }
}

beforeAll(async () => {
  // The first admin run creates and migrates the database, as on a fresh production machine.
  expect((await admin('orgs', 'list', '--json')).code).toBe(0);
  const h = openTestDb(data.dir);
  org = await seedOrg(h);
  await h.close();
});
afterAll(() => data.cleanup());

describe('svc-admin in production without SVC_SMTP_URL', () => {
  it('grants credits and lists orgs: no mail is needed, so no SMTP is asked for', async () => {
    expect(env.SVC_SMTP_URL).toBeUndefined();
    const grant = await admin('credits', 'grant', org.orgId, '250', '--reason', 'pilot', '--json');
    expect(grant.stderr).not.toContain('SVC_SMTP_URL');
    expect(grant.code).toBe(0);
    expect(JSON.parse(grant.stdout).data.credit_cents).toBe(250);
    const orgs = JSON.parse((await admin('orgs', 'list', '--json')).stdout);
    expect(orgs.data.map((o: { id: string }) => o.id)).toContain(org.orgId);
  });

  it('still refuses a bad amount with a one-line error and exit 1, no stack trace', async () => {
    const bad = await admin('credits', 'grant', org.orgId, 'ten', '--reason', 'typo');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('error: cents must be a positive integer\n');
  });
});
