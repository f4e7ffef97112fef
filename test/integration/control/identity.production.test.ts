import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb } from '../../helpers/db.js';

// A local Turnstile-style verifier: token "good" passes, anything else fails; records what it was sent.
let verifier: Server;
const seen: URLSearchParams[] = [];
let h: ControlHarness;

beforeAll(async () => {
  verifier = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      seen.push(form);
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ success: form.get('response') === 'good' && form.get('secret') === 'challenge-secret' }),
      );
    });
  });
  await new Promise<void>((r) => verifier.listen(0, '127.0.0.1', r));
  const port = (verifier.address() as AddressInfo).port;
  h = await startControl({
    SVC_ENV: 'production',
    SVC_SMTP_URL: 'smtp://127.0.0.1:9',
    SVC_CHALLENGE_VERIFY_URL: `http://127.0.0.1:${port}/siteverify`,
    SVC_CHALLENGE_SECRET: 'challenge-secret',
  });
});
afterAll(async () => {
  await h.stop();
  await new Promise((r) => verifier.close(r));
});

async function userCount(): Promise<number> {
  const db = openTestDb(h.dataDir);
  const n = (await db.db.selectFrom('users').select('id').execute()).length;
  await db.close();
  return n;
}

describe('production signup', () => {
  it('is rejected without a challenge token and creates nothing', async () => {
    const before = await userCount();
    const res = await call(h.control.url, 'POST', '/v1/signup', { body: { email: 'bot@example.test' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('challenge_required');
    expect(await userCount()).toBe(before);
  });

  it('is rejected when the verifier refuses the token', async () => {
    const res = await call(h.control.url, 'POST', '/v1/auth/signup', {
      body: { email: 'bot2@example.test', challenge_token: 'bad' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('challenge_failed');
    expect(seen.at(-1)?.get('response')).toBe('bad');
  });

  it('is accepted with a token the verifier accepts', async () => {
    const before = await userCount();
    const res = await call(h.control.url, 'POST', '/v1/signup', {
      body: { email: 'human@example.test', challenge_token: 'good' },
    });
    expect(res.status).toBe(202);
    expect(await userCount()).toBe(before + 1);
  });

  it('still lets agents register without a challenge', async () => {
    expect((await call(h.control.url, 'POST', '/v1/register')).status).toBe(201);
  });
});

describe('production without Stripe', () => {
  it('reports payments_mode disabled (test payments are refused), not test', async () => {
    const reg = (await call(h.control.url, 'POST', '/v1/register')).body;
    const res = await call(h.control.url, 'GET', '/v1/billing/balance', { token: reg.api_key });
    expect(res.status).toBe(200);
    expect(res.body.payments_mode).toBe('disabled');
  });
});
