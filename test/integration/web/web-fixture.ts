/** Shared by the page tests: a control plane with an SMTP sink, and signing a person in through the pages. */
import { expect } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { loginCodeOf, startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.js';
import { csrfOf, WebClient } from '../../helpers/web-client.js';
import { openTestDb } from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';

export interface WebFixture {
  h: ControlHarness;
  smtp: SmtpSink;
  db: DbHandles;
  /** Signs `email` in through /login and returns the cookie-keeping client. */
  signIn(email: string): Promise<WebClient>;
  stop(): Promise<void>;
}

export async function startWebFixture(env: Record<string, string> = {}): Promise<WebFixture> {
  const smtp = await startSmtpSink();
  const h = await startControl({ SVC_SMTP_URL: smtp.url, ...env });
  const db = openTestDb(h.dataDir);
  return {
    h,
    smtp,
    db,
    async signIn(email) {
      const web = new WebClient(h.control.url);
      const sent = await web.submit('/login', '/login', { email, next: '/dashboard' });
      expect(sent.status).toBe(200);
      const code = loginCodeOf(await smtp.waitFor(email));
      const done = await web.post('/login/verify', { email, code, next: '/dashboard', csrf_token: csrfOf(sent.html) });
      expect(done.status).toBe(303);
      return web;
    },
    async stop() {
      await db.close();
      await h.stop();
      await smtp.close();
    },
  };
}
