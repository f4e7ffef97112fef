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
import { isJsonObject, type JsonObject } from '../core/json-object.js';

export const SERVER_INFO = { name: 'svc', version: '1.0.0' };

const OPTIONS = {
  capabilities: { tools: {} },
  instructions:
    'svc is an API marketplace. Start with svc_register (or send an API key), find an API with discover_tools, read get_schema, call it with call_api, and see get_balance.',
  cacheHints: { 'tools/list': { ttlMs: 300_000, cacheScope: 'public' as const } },
};

/**
 * The per-request ToolEnv travels with `authInfo.extra` (the SDK passes that object through untouched): the object
 * is the key of this map, so the handler gets the env back typed, without a cast.
 */
const envs = new WeakMap<object, ToolEnv>();

/** The `authInfo.extra` object that carries `env` to the tool handlers. */
export function carrying(env: ToolEnv): Record<string, unknown> {
  const extra = {};
  envs.set(extra, env);
  return extra;
}

export function toolEnvOf(extra: Record<string, unknown> | undefined): ToolEnv {
  const env = extra ? envs.get(extra) : undefined;
  if (!env) throw new Error('MCP request reached the server without a ToolEnv');
  return env;
}

/**
 * What `tools/list` advertises of a tool's JSON Schemas, kept small because every agent loads the list into its
 * context at every start (issue 29 item 7: it was 107 KB; the test holds it under 40 KB). The tool's own zod schemas
 * still validate every call and answer; only the advertisement is shorter (docs/mcp.md, "Tool schemas"):
 * - both: no `$schema` (MCP 2025-11-25 makes JSON Schema 2020-12 the default dialect), no `pattern` beside a
 *   `format` (zod writes a 300-character regex beside `format: date-time`), no integer bounds that are only
 *   JavaScript's safe-integer range;
 * - an input schema keeps every level: it is what an agent fills in;
 * - an output schema names every top-level member of the answer with its type (`null` among them when it may be
 *   null) and description; a nested object or array of objects is described as such, without its members (they
 *   are in the answer itself, and in `/v1/openapi.json` under the same component names). No `required` list (it
 *   repeated every name) and no `additionalProperties: false`. `$ref`s are resolved first.
 */
export function advertisedSchema(json: JsonObject, role: 'input' | 'output'): JsonObject {
  const compact = role === 'input' ? json : topLevelOnly(resolveRefs(json, defsOf(json)), 0);
  const out = stripNoise(compact, true);
  return isJsonObject(out) ? out : {};
}

const defsOf = (json: JsonObject): JsonObject => (isJsonObject(json.$defs) ? json.$defs : {});

function resolveRefs(json: unknown, defs: JsonObject): unknown {
  if (Array.isArray(json)) return json.map((v) => resolveRefs(v, defs));
  if (!isJsonObject(json)) return json;
  const { $ref, $defs: _defs, ...rest } = json;
  const target = typeof $ref === 'string' ? defs[$ref.replace('#/$defs/', '')] : undefined;
  const out: JsonObject = isJsonObject(target) ? { ...(resolveRefs(target, defs) as JsonObject) } : {};
  for (const [k, v] of Object.entries(rest))
    out[k] = k === 'properties' ? mapValues(v, (s) => resolveRefs(s, defs)) : resolveRefs(v, defs);
  return out;
}

/** Members of the root object only (depth 0); deeper objects keep their type and description. */
function topLevelOnly(json: unknown, depth: number): unknown {
  if (!isJsonObject(json)) return json;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(json)) {
    if (k === 'properties') {
      if (depth === 0) out[k] = mapValues(v, (s) => topLevelOnly(s, 1));
    } else if (k === 'required' || k === 'additionalProperties') {
      // Neither is kept: `required` repeats every member's name (a third of an output schema), and
      // additionalProperties: false only lets a client refuse an answer with a member it does not know.
    } else if (k === 'items') out[k] = topLevelOnly(v, depth);
    else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf')
      out[k] = Array.isArray(v) ? v.map((s) => topLevelOnly(s, depth)) : v;
    else out[k] = v;
  }
  return out;
}

function stripNoise(json: unknown, root: boolean): unknown {
  if (Array.isArray(json)) return json.map((v) => stripNoise(v, false));
  if (!isJsonObject(json)) return json;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(json)) {
    if (k === '$schema' && root) continue;
    if (k === 'pattern' && 'format' in json) continue;
    if ((k === 'minimum' && v === -Number.MAX_SAFE_INTEGER) || (k === 'maximum' && v === Number.MAX_SAFE_INTEGER))
      continue;
    // Property names are data, not keywords: a member named `pattern` stays.
    out[k] = k === 'properties' || k === '$defs' ? mapValues(v, (s) => stripNoise(s, false)) : stripNoise(v, false);
  }
  return out;
}

function mapValues(v: unknown, f: (s: unknown) => unknown): unknown {
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, s] of Object.entries(v)) out[k] = f(s);
  return out;
}

/**
 * The zod schema as the SDK sees it, with its JSON Schema converted (and compacted) once per target and io, then
 * shared by every request. Validation stays zod's own; the cached JSON is never mutated (the SDK spreads it into a
 * new root object). `role` says which of the tool's schemas this is: its input or its output.
 */
export function withJsonSchemaOnce(schema: z.ZodObject, role: 'input' | 'output'): StandardSchemaWithJSON {
  const std = schema['~standard'];
  const memo = new Map<string, Record<string, unknown>>();
  const once = (io: 'input' | 'output') => (o: { target: string }) => {
    const k = `${io} ${o.target}`;
    let json = memo.get(k);
    if (!json) {
      json = advertisedSchema(std.jsonSchema[io](o as Parameters<typeof std.jsonSchema.input>[0]), role);
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
  input: withJsonSchemaOnce(tool.input, 'input'),
  output: withJsonSchemaOnce(tool.output, 'output'),
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
        annotations: r.tool.annotations,
      },
      r.handler,
    );
  }
  return server;
}

export const serverFactory: McpServerFactory = () => buildServer();
