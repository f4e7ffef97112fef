/** What an operator command needs: the same AppContext as the control process, on the marketplace's SQLite file. */
import { loadConfigOrExit } from '../../core/config.js';
import { createAppContext, type AppContext } from '../context.js';

export async function withAdminContext<T>(fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const ctx = await createAppContext(loadConfigOrExit(), { process: 'admin' });
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
