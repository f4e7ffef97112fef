/**
 * The control plane in-process: `createAppContext` over a fresh temp data dir and the Hono app on top, called with
 * `app.request()`. For tests of control-plane behaviour that no second process takes part in; what crosses
 * processes (gateway, change feed, signals) keeps its real-process tests.
 */
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { createAppContext, type AppContext } from '../../control/context.js';
import { createApp } from '../../control/app.js';
import { baseEnv, tempDataDir } from './processes.js';

export interface InProcessControl {
  ctx: AppContext;
  /** JSON request to the app; `token` is sent as a bearer credential. */
  call(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown },
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}

export async function startInProcessControl(
  extraEnv: Record<string, string> = {},
): Promise<InProcessControl & { stop(): Promise<void> }> {
  const data = tempDataDir();
  const ctx = await createAppContext(loadConfig(baseEnv(data.dir, extraEnv)), { process: 'test' });
  const app = createApp(ctx);
  return {
    ctx,
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = {};
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await app.request(path, {
        method,
        headers,
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    },
    async stop() {
      await ctx.close();
      data.cleanup();
    },
  };
}

/** One in-process control plane for the whole test file. */
export function useInProcessControl(extraEnv: Record<string, string> = {}): () => InProcessControl {
  let control: Awaited<ReturnType<typeof startInProcessControl>> | undefined;
  beforeAll(async () => {
    control = await startInProcessControl(extraEnv);
  });
  afterAll(() => control?.stop());
  return () => {
    if (!control) throw new Error('in-process control plane not started');
    return control;
  };
}
