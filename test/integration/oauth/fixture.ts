/** One control plane with an SMTP sink per test file, plus in-process access to its database and secret key. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { openTestDb } from '../../helpers/db.js';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.js';
import type { DbHandles } from '../../../core/db/database.js';
import { systemClock } from '../../../core/clock.js';

/** Tokens are bound to this resource; no MCP process is needed to test the authorization server. */
export const MCP_URL = 'http://127.0.0.1:47999';
export const MCP_RESOURCE = `${MCP_URL}/mcp`;

export interface OAuthFixture {
  h: ControlHarness;
  smtp: SmtpSink;
  db: DbHandles;
  /** What resolveAccessToken needs, over the test's own connection. */
  tokenCtx: { db: DbHandles['db']; clock: typeof systemClock; secretKey: Buffer };
  stop(): Promise<void>;
}

export async function startOAuthFixture(): Promise<OAuthFixture> {
  const smtp = await startSmtpSink();
  const h = await startControl({ SVC_SMTP_URL: smtp.url, SVC_MCP_URL: MCP_URL });
  const db = openTestDb(h.dataDir);
  const secretKey = Buffer.from(readFileSync(join(h.dataDir, 'secret.key'), 'utf8').trim(), 'hex');
  return {
    h,
    smtp,
    db,
    tokenCtx: { db: db.db, clock: systemClock, secretKey },
    async stop() {
      await db.close();
      await h.stop();
      await smtp.close();
    },
  };
}

export const newEmail = (tag: string) => `${tag}-${Date.now()}-${Math.random().toString(36).slice(2, 7)}@example.test`;
