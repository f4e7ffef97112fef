/**
 * The MCP app in-process (`app.request()`) over a real SQLite file in a temp data dir, for what needs no second
 * process: an injected clock (the session sweep) or the advertised tool list. Tools that reach the gateway need
 * the real processes (fixture.ts).
 */
import { loadConfig } from '../../../core/config.js';
import type { Clock } from '../../../core/clock.js';
import { createAppContext, type AppContext } from '../../../control/context.js';
import { createMcpApp } from '../../../mcp/app.js';
import { createGatewayCalls } from '../../../core/gateway-calls.js';
import { McpSessionStore } from '../../../mcp/sessions.js';
import { baseEnv, tempDataDir } from '../../helpers/processes.js';

export interface InProcessMcp {
  ctx: AppContext;
  sessions: McpSessionStore;
  /** POST /mcp with a JSON-RPC body (JSON and SSE accepted, Host 127.0.0.1). */
  post(body: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; json: any }>;
  stop(): Promise<void>;
}

export async function startInProcessMcp(opts: { clock?: Clock } = {}): Promise<InProcessMcp> {
  const data = tempDataDir();
  const ctx = await createAppContext(loadConfig(baseEnv(data.dir)), {
    process: 'test',
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  const sessions = new McpSessionStore(ctx);
  const gateway = createGatewayCalls('http://127.0.0.1:9'); // never reached in-process
  const app = createMcpApp({ ctx, sessions, gateway });
  const socket = { incoming: { socket: { remoteAddress: '127.0.0.1' } } };
  return {
    ctx,
    sessions,
    async post(body, headers = {}) {
      const res = await app.request(
        'http://127.0.0.1/mcp',
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            host: '127.0.0.1',
            ...headers,
          },
          body: JSON.stringify(body),
        },
        socket,
      );
      return { status: res.status, headers: res.headers, json: await res.json() };
    },
    async stop() {
      await gateway.close();
      await ctx.close();
      data.cleanup();
    },
  };
}
