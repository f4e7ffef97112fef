import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { expectLedgerConsistent, openTestDb, seedListing, seedOrg } from '../../helpers/db.js';
import { ROOT } from '../../helpers/processes.js';

const run = promisify(execFile);
let h: ControlHarness;
beforeAll(async () => {
  h = await startControl();
});
afterAll(() => h.stop());

async function admin(...args: string[]): Promise<{ ok: boolean; data: any }> {
  const { stdout } = await run(process.execPath, [join(ROOT, 'dist/control/admin/main.js'), ...args, '--json'], {
    env: h.env,
  });
  return JSON.parse(stdout);
}

async function adminFails(...args: string[]): Promise<string> {
  try {
    await run(process.execPath, [join(ROOT, 'dist/control/admin/main.js'), ...args], { env: h.env });
  } catch (e) {
    expect((e as { code: number }).code).toBe(1);
    return (e as { stderr: string }).stderr;
  }
  throw new Error('admin command unexpectedly succeeded');
}

describe('operator CLI', () => {
  it('lists orgs', async () => {
    const reg = (await call(h.control.url, 'POST', '/v1/register')).body;
    const out = await admin('orgs', 'list');
    expect(out.ok).toBe(true);
    expect(out.data.map((o: { id: string }) => o.id)).toContain(reg.org_id);
  });

  it('grants and deducts credits through the ledger with a reason, and refuses to overdraw', async () => {
    const reg = (await call(h.control.url, 'POST', '/v1/register')).body;
    expect((await admin('credits', 'grant', reg.org_id, '500', '--reason', 'pilot customer')).data.credit_cents).toBe(
      500,
    );
    expect((await admin('credits', 'deduct', reg.org_id, '120', '--reason', 'refund reversal')).data.credit_cents).toBe(
      380,
    );
    expect(await adminFails('credits', 'deduct', reg.org_id, '1000', '--reason', 'too much')).toContain(
      'insufficient_credits',
    );
    expect((await call(h.control.url, 'GET', '/v1/me', { token: reg.api_key })).body.balance.credit_cents).toBe(380);
    const db = openTestDb(h.dataDir);
    const entries = await db.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('org_id', '=', reg.org_id)
      .orderBy('created_at')
      .execute();
    await expectLedgerConsistent(db);
    await db.close();
    expect(entries.map((e) => [e.kind, e.amount_cents, e.reason])).toEqual([
      ['adjustment', 500, 'operator: pilot customer'],
      ['adjustment', -120, 'operator: refund reversal'],
    ]);
  });

  it('refuses a non-integer amount without writing', async () => {
    const reg = (await call(h.control.url, 'POST', '/v1/register')).body;
    expect(await adminFails('credits', 'grant', reg.org_id, '1.5', '--reason', 'x')).toContain('positive integer');
    expect((await call(h.control.url, 'GET', '/v1/me', { token: reg.api_key })).body.balance.credit_cents).toBe(0);
  });

  it('suspends an org (its keys stop working) and lifts the suspension', async () => {
    const reg = (await call(h.control.url, 'POST', '/v1/register')).body;
    await admin('suspend', 'org', reg.org_id, '--reason', 'abuse');
    expect((await call(h.control.url, 'GET', '/v1/me', { token: reg.api_key })).body.code).toBe('org_suspended');
    await admin('unsuspend', 'org', reg.org_id);
    expect((await call(h.control.url, 'GET', '/v1/me', { token: reg.api_key })).status).toBe(200);
  });

  it('suspends a listing by slug and announces it on the change feed', async () => {
    const db = openTestDb(h.dataDir);
    const org = await seedOrg(db);
    const { apiId } = await seedListing(db, {
      orgId: org.orgId,
      slug: 'suspend-me',
      baseUrl: 'http://127.0.0.1:9',
      endpoints: [],
    });
    await admin('suspend', 'listing', 'suspend-me', '--reason', 'malware');
    const row = await db.db
      .selectFrom('apis')
      .select(['suspended_at', 'suspended_reason'])
      .where('id', '=', apiId)
      .executeTakeFirstOrThrow();
    const changes = await db.db
      .selectFrom('changes')
      .selectAll()
      .where('entity', '=', 'api')
      .where('entity_id', '=', apiId)
      .execute();
    await db.close();
    expect(row.suspended_at).not.toBeNull();
    expect(row.suspended_reason).toBe('malware');
    expect(changes.length).toBeGreaterThan(0);
  });

  it('reads the development outbox', async () => {
    const addr = `outbox-${Date.now()}@example.test`;
    await call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email: addr } });
    let mails: { subject: string; text: string }[] = [];
    for (let i = 0; i < 20 && mails.length === 0; i++) {
      mails = (await admin('outbox', '--to', addr)).data;
      if (!mails.length) await new Promise((r) => setTimeout(r, 100));
    }
    expect(mails[0]!.subject).toMatch(/login code: \d{6}/);
    expect(h.control.stderr()).toContain(`To: ${addr}`);
  });
});
