import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { loginCodeOf, startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.js';
import { csrfOf, WebClient } from '../../helpers/web-client.js';

let h: ControlHarness;
let smtp: SmtpSink;

beforeAll(async () => {
  smtp = await startSmtpSink();
  h = await startControl({ SVC_ENV: 'production', SVC_SMTP_URL: smtp.url });
});
afterAll(async () => {
  await h?.stop();
  await smtp?.close();
});

describe('web sign-in in production', () => {
  it('uses __Host- cookies marked Secure, and HSTS', async () => {
    const web = new WebClient(h.control.url);
    const login = await web.get('/login');
    expect(login.headers.get('strict-transport-security')).toMatch(/max-age=/);
    const csrfCookie = login.headers.getSetCookie().find((s) => s.startsWith('__Host-svc_csrf='))!;
    expect(csrfCookie).toMatch(/; Secure/i);
    expect(csrfCookie).toMatch(/; Path=\//i);
    const sent = await web.post('/login', { email: 'prod@example.com', csrf_token: csrfOf(login.html) });
    expect(sent.status).toBe(200);
    const code = loginCodeOf(await smtp.waitFor('prod@example.com'));
    const res = await fetch(`${h.control.url}/login/verify`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      body: new URLSearchParams({ email: 'prod@example.com', code, csrf_token: csrfOf(sent.html) }).toString(),
    });
    expect(res.status).toBe(303);
    const session = res.headers.getSetCookie().find((s) => s.startsWith('__Host-svc_session='))!;
    expect(session).toMatch(/; Secure/i);
    expect(session).toMatch(/; HttpOnly/i);
    expect(session).toMatch(/; SameSite=Lax/i);
  });
});
