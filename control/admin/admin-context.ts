/**
 * What an operator command needs: the same AppContext as the control process, on the marketplace's SQLite file.
 * No operator command sends mail, so production without SVC_SMTP_URL (which the control plane refuses at start:
 * its codes go by mail) is fine here: the context gets a mailer that refuses to send instead of the SMTP check.
 */
import { loadConfigOrExit } from '../../core/config.js';
import { createAppContext, type AppContext } from '../context.js';
import type { Mailer } from '../email/mailer.js';

/** The operator tool's mailer when no SMTP transport is configured: sending is a bug, said loudly. */
export const NO_MAIL: Mailer = {
  kind: 'none',
  async send() {
    throw new Error('the operator tool sends no mail (no SVC_SMTP_URL configured)');
  },
};

export async function withAdminContext<T>(fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const config = loadConfigOrExit();
  const ctx = await createAppContext(config, {
    process: 'admin',
    ...(config.smtpUrl ? {} : { mailer: NO_MAIL }),
  });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

/** `--json` prints one JSON document; otherwise one line per item. */
export function print(json: boolean, data: unknown, lines: string[]): void {
  process.stdout.write(
    json ? JSON.stringify({ ok: true, data }, null, 2) + '\n' : lines.join('\n') + (lines.length ? '\n' : ''),
  );
}

export function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

export const jsonArg = { json: { type: 'boolean', description: 'Print JSON', default: false } } as const;
