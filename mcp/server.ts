/**
 * The MCP server factory: one McpServer per request (2026-07-28) or per 2025-era request, with every tool bound to
 * that request's caller. One factory serves both eras, so their tools can never drift apart.
 */
import { McpServer, type McpServerFactory } from '@modelcontextprotocol/server';
import { TOOLS } from './tools/index.js';
import type { ToolEnv } from './tool-kit.js';

export const SERVER_INFO = { name: 'svc', version: '1.0.0' };

/** The per-request ToolEnv travels to the factory in `authInfo.extra` (the SDK passes it through untouched). */
export function toolEnvOf(extra: Record<string, unknown> | undefined): ToolEnv {
  const env = extra?.toolEnv as ToolEnv | undefined;
  if (!env) throw new Error('MCP request reached the server without a ToolEnv');
  return env;
}

export function buildServer(env: ToolEnv): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions:
      'svc is an API marketplace. Start with svc_register (or send an API key), find an API with discover_tools, read get_schema, call it with call_api, and see get_balance.',
    cacheHints: { 'tools/list': { ttlMs: 300_000, cacheScope: 'public' } },
  });
  for (const t of TOOLS) {
    server.registerTool(
      t.name,
      {
        title: t.title,
        description: t.description,
        inputSchema: t.input,
        outputSchema: t.output,
        annotations: { title: t.title, ...t.annotations },
      },
      (args: Record<string, unknown>, ctx) => t.run(args, env, ctx.mcpReq.id),
    );
  }
  return server;
}

export const serverFactory: McpServerFactory = (rc) => buildServer(toolEnvOf(rc.authInfo?.extra));
