import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { expectLedgerConsistent, openTestDb } from '../../helpers/db.js';
import { loginCodeOf, startSmtpSink, verifyTokenOf, type SmtpSink } from '../../helpers/smtp-sink.js';

let h: ControlHarness;
let smtp: SmtpSink;
let clockFile: string;
const STARTER = 25;

beforeAll(async () => {
  smtp = await startSmtpSink();
  // A movable clock: the process re-reads this offset file (development only).
  clockFile = join(tmpdir(), `svc-clock-offset-${process.pid}`);
  writeFileSync(clockFile, '0');
  h = await startControl({
    SVC_SMTP_URL: smtp.url,
    SVC_STARTER_CREDIT_CENTS: String(STARTER),
    SVC_LOGIN_RATE_PER_HOUR: '50',
    SVC_CLOCK_OFFSET_FILE: clockFile,
  });
});
afterAll(async () => {
  await h.stop();
  await smtp.close();
});

const email = (tag: string) => `${tag}-${Date.now()}-${Math.random().toString(36).slice(2, 7)}@example.test`;

async function balanceOf(orgId: string) {
  const db = openTestDb(h.dataDir);
  const b = await db.db.selectFrom('balances').selectAll().where('org_id', '=', orgId).executeTakeFirstOrThrow();
  await db.close();
  return b;
}

describe('signup and email verification', () => {
  it('withholds 100 cents until the emailed token is verified, then releases them exactly once', async () => {
    const addr = email('signup');
    const res = await call(h.control.url, 'POST', '/v1/signup', { body: { email: addr, name: 'Ada' } });
    expect(res.status).toBe(202);
    const token = verifyTokenOf(await smtp.waitFor(addr, /verif/i));

    const db = openTestDb(h.dataDir);
    const user = await db.db.selectFrom('users').selectAll().where('email', '=', addr).executeTakeFirstOrThrow();
    await db.close();
    expect(await balanceOf(user.org_id)).toMatchObject({ credit_cents: 0, pending_cents: 100 });

    const v = await call(h.control.url, 'POST', '/v1/auth/verify-email', { body: { token } });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ verified: true, org_id: user.org_id, email: addr, released_credit_cents: 100 });
    expect(await balanceOf(user.org_id)).toMatchObject({ credit_cents: 100, pending_cents: 0 });

    const again = await call(h.control.url, 'POST', '/v1/auth/verify-email', { body: { token } });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('invalid_token');
    expect(await balanceOf(user.org_id)).toMatchObject({ credit_cents: 100, pending_cents: 0 });
    const check = openTestDb(h.dataDir);
    await expectLedgerConsistent(check);
    await check.close();
  });

  it('development checks a challenge token that is sent: only none or the test token pass', async () => {
    const bad = await call(h.control.url, 'POST', '/v1/signup', {
      body: { email: email('bot'), challenge_token: 'anything-at-all' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('challenge_failed');
    const test = await call(h.control.url, 'POST', '/v1/signup', {
      body: { email: email('widget'), challenge_token: 'XXXX.DUMMY.TOKEN.XXXX' },
    });
    expect(test.status).toBe(202);
  });

  it('signing up again before verifying resends a working verification token (the 100 cents are not stranded)', async () => {
    const addr = email('resend');
    await call(h.control.url, 'POST', '/v1/signup', { body: { email: addr } });
    await smtp.waitFor(addr, /verif/i); // the first mail got lost
    const again = await call(h.control.url, 'POST', '/v1/signup', { body: { email: addr } });
    expect(again.status).toBe(202);
    const token = verifyTokenOf(await smtp.waitFor(addr, /verif/i));
    const v = await call(h.control.url, 'POST', '/v1/auth/verify-email', { body: { token } });
    expect(v.status).toBe(200);
    expect(v.body.released_credit_cents).toBe(100);
  });

  it('an OTP login proves the email: the org shows verified and the withheld 100 cents are released', async () => {
    const addr = email('otp-verifies');
    await call(h.control.url, 'POST', '/v1/signup', { body: { email: addr } });
    await smtp.waitFor(addr, /verif/i);
    await call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email: addr } });
    const code = loginCodeOf(await smtp.waitFor(addr, /login code/i));
    const login = await call(h.control.url, 'POST', '/v1/auth/login/verify', { body: { email: addr, code } });
    expect(login.status).toBe(200);
    const me = await call(h.control.url, 'GET', '/v1/me', { token: login.body.session_token });
    expect(me.body.org.email_verified).toBe(true);
    expect(await balanceOf(login.body.org_id)).toMatchObject({ credit_cents: 100 + STARTER, pending_cents: 0 });
    const check = openTestDb(h.dataDir);
    await expectLedgerConsistent(check);
    await check.close();
  });

  it('answers /v1/auth/signup the same for an existing email and creates nothing', async () => {
    const addr = email('dup');
    const first = await call(h.control.url, 'POST', '/v1/auth/signup', { body: { email: addr } });
    await smtp.waitFor(addr, /verif/i);
    const second = await call(h.control.url, 'POST', '/v1/auth/signup', { body: { email: addr } });
    expect(second.status).toBe(first.status);
    expect(second.body).toEqual(first.body);
    // Still unverified: the second signup resends the verification instead of "you already have an account".
    await smtp.waitFor(addr, /verif/i);
    const db = openTestDb(h.dataDir);
    const users = await db.db.selectFrom('users').select('id').where('email', '=', addr).execute();
    await db.close();
    expect(users).toHaveLength(1);
  });

  it('elevates the same registered key with billing:write and provider:write when the org verifies an email', async () => {
    const reg = (await call(h.control.url, 'POST', '/v1/register')).body;
    const addr = email('agent');
    const attach = await call(h.control.url, 'POST', '/v1/auth/email', { token: reg.api_key, body: { email: addr } });
    expect(attach.status).toBe(202);
    const token = verifyTokenOf(await smtp.waitFor(addr, /verif/i));
    const v = await call(h.control.url, 'POST', '/v1/auth/verify-email', { body: { token } });
    expect(v.status).toBe(200);
    expect(v.body.elevated_key_ids).toEqual([reg.key_id]);
    expect(v.body.released_credit_cents).toBe(0);
    const me = await call(h.control.url, 'GET', '/v1/me', { token: reg.api_key });
    expect(me.body.credential.key_id).toBe(reg.key_id);
    expect(me.body.credential.scopes).toEqual([
      'catalog:read',
      'proxy:call',
      'keys:write',
      'usage:read',
      'billing:write',
      'provider:write',
    ]);
    expect(me.body.org.email_verified).toBe(true);
    const list = await call(h.control.url, 'GET', '/v1/keys', { token: reg.api_key });
    expect(list.body.data).toHaveLength(1);
  });
});

describe('passwordless login', () => {
  it('gives the identical response for an unknown email', async () => {
    const known = email('known');
    await call(h.control.url, 'POST', '/v1/signup', { body: { email: known } });
    await smtp.waitFor(known, /verif/i);
    const a = await call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email: known } });
    const b = await call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email: email('nobody') } });
    expect(a.status).toBe(202);
    expect(b.status).toBe(a.status);
    expect(b.body).toEqual(a.body);
  });

  it('exchanges the mailed code for a session; starter credits are granted once', async () => {
    const addr = email('login');
    await call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email: addr } });
    const code = loginCodeOf(await smtp.waitFor(addr, /login code/i));
    const res = await call(h.control.url, 'POST', '/v1/auth/login/verify', { body: { email: addr, code } });
    expect(res.status).toBe(200);
    expect(res.body.session_token).toMatch(/^sess_/);
    expect(res.body.starter_credit_cents).toBe(STARTER);
    expect(res.body.new_account).toBe(true);

    const me = await call(h.control.url, 'GET', '/v1/me', { token: res.body.session_token });
    expect(me.status).toBe(200);
    expect(me.body.credential.type).toBe('session');
    expect(me.body.roles).toEqual(['owner']);
    expect(me.body.balance.credit_cents).toBe(STARTER);

    // Second login: same org, no second grant.
    await call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email: addr } });
    const code2 = loginCodeOf(await smtp.waitFor(addr, /login code/i));
    const res2 = await call(h.control.url, 'POST', '/v1/auth/login/verify', { body: { email: addr, code: code2 } });
    expect(res2.status).toBe(200);
    expect(res2.body.org_id).toBe(res.body.org_id);
    expect(res2.body.starter_credit_cents).toBe(0);
    expect((await balanceOf(res.body.org_id)).credit_cents).toBe(STARTER);

    // A used code does not work twice.
    const reuse = await call(h.control.url, 'POST', '/v1/auth/login/verify', { body: { email: addr, code: code2 } });
    expect(reuse.status).toBe(400);
    expect(reuse.body.code).toBe('invalid_code');
  });

  it('refuses a wrong code and locks the code after 5 attempts, even for the right code', async () => {
    const addr = email('wrong');
    await call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email: addr } });
    const code = loginCodeOf(await smtp.waitFor(addr, /login code/i));
    const wrong = code === '000000' ? '111111' : '000000';
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call(h.control.url, 'POST', '/v1/auth/login/verify', { body: { email: addr, code: wrong } });
      codes.push(r.body.code);
    }
    expect(codes.slice(0, 4)).toEqual(Array(4).fill('invalid_code'));
    expect(codes[4]).toBe('too_many_attempts');
    const right = await call(h.control.url, 'POST', '/v1/auth/login/verify', { body: { email: addr, code } });
    expect(right.status).toBe(429);
    expect(right.body.code).toBe('too_many_attempts');
  });

  it('refuses an expired code (10-minute TTL)', async () => {
    const addr = email('expired');
    await call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email: addr } });
    const code = loginCodeOf(await smtp.waitFor(addr, /login code/i));
    writeFileSync(clockFile, String(11 * 60_000));
    await new Promise((r) => setTimeout(r, 300));
    try {
      const res = await call(h.control.url, 'POST', '/v1/auth/login/verify', { body: { email: addr, code } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_code');
    } finally {
      writeFileSync(clockFile, '0');
      await new Promise((r) => setTimeout(r, 300));
    }
  });

  it('logout ends the session; the token is refused afterwards; an API key cannot log out', async () => {
    const addr = email('logout');
    await call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email: addr } });
    const code = loginCodeOf(await smtp.waitFor(addr, /login code/i));
    const { session_token } = (
      await call(h.control.url, 'POST', '/v1/auth/login/verify', { body: { email: addr, code } })
    ).body;
    const reg = (await call(h.control.url, 'POST', '/v1/register')).body;
    const byKey = await call(h.control.url, 'POST', '/v1/auth/logout', { token: reg.api_key });
    expect(byKey.status).toBe(401);
    expect(byKey.body.code).toBe('session_required');
    expect((await call(h.control.url, 'POST', '/v1/auth/logout', { token: session_token })).status).toBe(200);
    const after = await call(h.control.url, 'GET', '/v1/me', { token: session_token });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('unauthorized');
  });

  it('stores codes and session tokens only hashed', async () => {
    const addr = email('hashed');
    await call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email: addr } });
    const code = loginCodeOf(await smtp.waitFor(addr, /login code/i));
    const { session_token } = (
      await call(h.control.url, 'POST', '/v1/auth/login/verify', { body: { email: addr, code } })
    ).body;
    const db = openTestDb(h.dataDir);
    const codes = await db.db.selectFrom('login_codes').selectAll().where('email', '=', addr).execute();
    const sessions = await db.db.selectFrom('sessions').select('token_hash').execute();
    await db.close();
    expect(JSON.stringify(codes)).not.toContain(code);
    expect(JSON.stringify(sessions)).not.toContain(session_token);
  });
});
