import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { loginCodeOf, startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.js';

// Default limits (SVC_LOGIN_RATE_PER_HOUR=5): 5 codes mailed per email per hour, 50 requests and 30 failed
// verifications per address per hour. All requests here come from one address (127.0.0.1).
let h: ControlHarness;
let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await startSmtpSink();
  h = await startControl({ SVC_SMTP_URL: smtp.url });
});
afterAll(async () => {
  await h.stop();
  await smtp.close();
});

const request = (email: string) => call(h.control.url, 'POST', '/v1/auth/login/request', { body: { email } });
const verify = (email: string, code: string) =>
  call(h.control.url, 'POST', '/v1/auth/login/verify', { body: { email, code } });

describe('login rate limits', () => {
  it('a stranger flooding requests for an email neither locks its owner out nor floods the mailbox', async () => {
    const victim = 'victim@example.test';
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await request(victim)).status);
    expect(statuses).toEqual(Array(8).fill(202));
    // Five mails arrive; the last one's code still works, however many requests followed it.
    for (let i = 0; i < 5; i++) await smtp.waitFor(victim, /login code/i);
    const last = smtp.mails.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.mails.length).toBe(last);
    expect(smtp.mails.filter((m) => m.to.includes(victim))).toHaveLength(0);
  });

  it("the owner's latest mailed code still logs in after the flood", async () => {
    const owner = 'owner@example.test';
    let code = '';
    for (let i = 0; i < 5; i++) {
      await request(owner);
      code = loginCodeOf(await smtp.waitFor(owner, /login code/i));
    }
    expect((await request(owner)).status).toBe(202);
    const res = await verify(owner, code);
    expect(res.status).toBe(200);
    expect(res.body.session_token).toMatch(/^sess_/);
  });

  it('a burnt code (5 wrong guesses) does not block a fresh one past the mail cap', async () => {
    const addr = 'burnt@example.test';
    for (let i = 0; i < 5; i++) {
      await request(addr);
      await smtp.waitFor(addr, /login code/i);
    }
    for (let i = 0; i < 5; i++) await verify(addr, '000000');
    await request(addr);
    const fresh = loginCodeOf(await smtp.waitFor(addr, /login code/i));
    expect((await verify(addr, fresh)).status).toBe(200);
  });

  it('counts failed verifications per address: past 30 in an hour that address gets 429, even with a right code', async () => {
    const addr = 'guessed@example.test';
    await request(addr);
    const code = loginCodeOf(await smtp.waitFor(addr, /login code/i));
    // 5 failures came from the previous test; spread the rest over other emails (one code each is not needed).
    let last = 0;
    for (let i = 0; i < 25; i++) last = (await verify(`nobody${i}@example.test`, '123456')).status;
    expect(last).toBe(400);
    const blocked = await verify(addr, code);
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
