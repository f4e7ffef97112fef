/**
 * The MCP server factory. The SDK wants a fresh McpServer per request (it refuses an instance still serving one), so
 * everything that does not depend on the caller is built once per process: each tool's handler, and its JSON Schemas
 * (the SDK converts zod → JSON Schema on every tools/list and tools/call of a fresh instance, which was most of a
 * request's CPU). The caller travels in `authInfo.extra`, which the SDK hands to every tool handler as
 * `ctx.http.authInfo`. One factory serves both eras, so their tools can never drift apart.
 */
import {
  McpServer,
  type McpServerFactory,
  type ServerContext,
  type StandardSchemaWithJSON,
} from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { TOOLS } from './tools/index.js';
import type { ToolDef, ToolEnv } from './tool-kit.js';

export const SERVER_INFO = { name: 'svc', version: '1.0.0' };

const OPTIONS = {
  capabilities: { tools: {} },
  instructions:
    'svc is an API marketplace. Start with svc_register (or send an API key), find an API with discover_tools, read get_schema, call it with call_api, and see get_balance.',
  cacheHints: { 'tools/list': { ttlMs: 300_000, cacheScope: 'public' as const } },
};

/** The per-request ToolEnv travels in `authInfo.extra` (the SDK passes it through untouched). */
export function toolEnvOf(extra: Record<string, unknown> | undefined): ToolEnv {
  const env = extra?.toolEnv as ToolEnv | undefined;
  if (!env) throw new Error('MCP request reached the server without a ToolEnv');
  return env;
}

/**
 * The zod schema as the SDK sees it, with its JSON Schema converted once per target and io, then shared by every
 * request. Validation stays zod's own; the cached JSON is never mutated (the SDK spreads it into a new root object).
 */
export function withJsonSchemaOnce(schema: z.ZodObject): StandardSchemaWithJSON {
  const std = schema['~standard'];
  const memo = new Map<string, Record<string, unknown>>();
  const once = (io: 'input' | 'output') => (o: { target: string }) => {
    const k = `${io} ${o.target}`;
    let json = memo.get(k);
    if (!json) {
      json = std.jsonSchema[io](o as Parameters<typeof std.jsonSchema.input>[0]);
      memo.set(k, json);
    }
    return json;
  };
  return {
    '~standard': {
      version: 1,
      vendor: std.vendor,
      validate: (value: unknown) => std.validate(value),
      jsonSchema: { input: once('input'), output: once('output') },
    },
  };
}

export interface Registration {
  tool: ToolDef;
  input: StandardSchemaWithJSON;
  output: StandardSchemaWithJSON;
  handler: (args: unknown, ctx: ServerContext) => ReturnType<ToolDef['run']>;
}

const REGISTRATIONS: readonly Registration[] = TOOLS.map((tool) => ({
  tool,
  input: withJsonSchemaOnce(tool.input),
  output: withJsonSchemaOnce(tool.output),
  handler: (args, ctx) => tool.run(args, toolEnvOf(ctx.http?.authInfo?.extra), ctx.mcpReq.id),
}));

/** Each tool's prebuilt parts by name: the fast path (mcp/fast-tool-call.ts) validates with the very same schemas. */
export const REGISTRATIONS_BY_NAME: ReadonlyMap<string, Registration> = new Map(
  REGISTRATIONS.map((r) => [r.tool.name, r]),
);

/** One request's server: 34 registrations of prebuilt parts (no schema conversion, no closures per tool). */
export function buildServer(): McpServer {
  const server = new McpServer(SERVER_INFO, OPTIONS);
  for (const r of REGISTRATIONS) {
    server.registerTool(
      r.tool.name,
      {
        title: r.tool.title,
        description: r.tool.description,
        inputSchema: r.input,
        outputSchema: r.output,
        annotations: { title: r.tool.title, ...r.tool.annotations },
      },
      r.handler,
    );
  }
  return server;
}

export const serverFactory: McpServerFactory = () => buildServer();
