/**
 * The tools/call fast path: a plain node:http listener in front of the Hono app that answers a POST /mcp carrying
 * one JSON-RPC `tools/call` of a known tool, in either era, without the SDK's per-request McpServer, transport and
 * web Request/Response objects (they cost ~1.5 ms of CPU per call; issue 11 item 7, docs/mcp.md).
 *
 * It takes only requests it can prove the SDK would hand to the tool's handler (the shape checks in `fastCallOf`);
 * everything else (initialize, tools/list, batches, GET/DELETE, parse errors, unknown tools, odd headers or `_meta`)
 * goes to the Hono listener untouched, with the body already read handed over as `rawBody`. A taken request runs the
 * same gate as the SDK path (mcp/request-gate.ts), then what the SDK's McpServer does for tools/call: the tool's
 * input schema (a failure is a tool error with the SDK's wording), `tool.run` with the same ToolEnv, the output
 * schema, and the SDK's answer bytes. test/integration/mcp/mcp.fast-path.test.ts proves the answers equal.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  isJsonContentType,
  type CallToolResult,
  type JSONRPCRequest,
} from '@modelcontextprotocol/server';
import {
  createRequestGate,
  eraOf,
  failureAnswer,
  parseJsonBody,
  type HttpAnswer,
  type McpAppDeps,
  type Era,
  type McpHttpRequest,
} from './request-gate.js';
import { REGISTRATIONS_BY_NAME, SERVER_INFO, type Registration } from './server.js';
import { issuesText, keysWithin, toolError, type ToolEnv } from './tool-kit.js';
import { jsonOfStructured } from './result.js';
import { isJsonObject } from '../core/json-object.js';

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** A tools/call body is small; anything larger (or chunked) takes the SDK path, which reads and caps it itself. */
const FAST_BODY_CAP = 64 * 1024;
/**
 * The Host values @hono/node-server takes as they are (its `reValidHost`). It re-parses any other and may answer 400
 * itself before the app runs (a path in the Host, a port out of range), so such a request takes the SDK path.
 */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
/** The one modern revision this SDK serves (its SUPPORTED_MODERN_PROTOCOL_VERSIONS, not exported). */
const MODERN_REVISION = '2026-07-28';
const LEGACY_VERSIONS: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS);
const MESSAGE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAM_KEYS = new Set(['name', 'arguments', '_meta']);
const MODERN_META_KEYS = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY]);
/** What the SDK adds to a 2026-07-28 result (its modern codec), serialized once. */
const MODERN_RESULT_TAIL = `"resultType":"complete","_meta":${JSON.stringify({ 'io.modelcontextprotocol/serverInfo': SERVER_INFO })}`;

export interface FastCall {
  reg: Registration;
  era: Era;
  id: string | number;
  args: Record<string, unknown> | undefined;
  modern: boolean;
}

/**
 * The SDK's era classifier (classifyInboundRequest) zod-parses the whole message: ~8 % of a call_api's CPU here.
 * For a message that already passed fastCallOf's shape checks (jsonrpc 2.0, a string or integer id, method
 * tools/call, params an object with name / arguments / _meta only) its outcome depends on nothing but the three
 * MCP headers and `params._meta` (its request schema checks jsonrpc, id, method and `_meta` and lets the rest of
 * params through), so it is remembered by those. Bounded: a client picks its `_meta`, so the map is emptied when
 * full rather than grown.
 */
const ERA_CACHE_MAX = 512;
const eraCache = new Map<string, Era>();

function fastEraOf(header: McpHttpRequest['header'], parsed: Record<string, unknown>, meta: unknown): Era {
  const key = `${header('mcp-protocol-version')}\n${header('mcp-method')}\n${header('mcp-name')}\n${meta === undefined ? '' : JSON.stringify(meta)}`;
  const hit = eraCache.get(key);
  // A modern route carries the message it classified: this request's own, never a remembered one.
  if (hit) {
    const route = hit.route;
    if (route?.kind !== 'modern' || route.messageKind !== 'request') return hit;
    // The same shape as the message the remembered outcome was computed for (see above).
    return { ...hit, route: { ...route, message: parsed as JSONRPCRequest } };
  }
  const era = eraOf('POST', header, parsed);
  if (eraCache.size >= ERA_CACHE_MAX) eraCache.clear();
  eraCache.set(key, era);
  return era;
}

/**
 * The call when this POST is one tools/call of a known tool that the SDK would route to its handler unchanged; else
 * undefined (the SDK path answers it, including every protocol error).
 */
export function fastCallOf(header: McpHttpRequest['header'], parsed: unknown): FastCall | undefined {
  if (!isJsonContentType(header('content-type') ?? null)) return undefined;
  if (!isJsonObject(parsed) || !keysWithin(parsed, MESSAGE_KEYS)) return undefined;
  const { id, params } = parsed;
  if (parsed.jsonrpc !== '2.0' || parsed.method !== 'tools/call') return undefined;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (!isJsonObject(params) || !keysWithin(params, PARAM_KEYS) || typeof params.name !== 'string') return undefined;
  const reg = REGISTRATIONS_BY_NAME.get(params.name);
  if (!reg) return undefined;
  const args = params.arguments;
  // The SDK re-reads `arguments` as a zod record, which drops an own `__proto__` member; such a call is left to it.
  if (args !== undefined && (!isJsonObject(args) || Object.hasOwn(args, '__proto__'))) return undefined;
  const meta = params._meta;
  const era = fastEraOf(header, parsed, meta);
  const { route } = era;
  if (route?.kind === 'legacy') {
    // The SDK's 2025 transport checks: Accept names both types; a protocol-version header, if any, is supported.
    const accept = header('accept');
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
    const version = header('mcp-protocol-version');
    if (version !== undefined && !LEGACY_VERSIONS.has(version)) return undefined;
    if (meta !== undefined) return undefined;
    return { reg, era, id: id as string | number, args, modern: false };
  }
  if (route?.kind !== 'modern' || route.messageKind !== 'request') return undefined;
  // The modern entry's ladder: a served revision, and the standard headers present and naming this very call.
  if (route.classification.revision !== MODERN_REVISION) return undefined;
  if (header('mcp-protocol-version') !== MODERN_REVISION) return undefined;
  if (header('mcp-method') !== 'tools/call' || header('mcp-name') !== params.name) return undefined;
  if (!isJsonObject(meta) || !keysWithin(meta, MODERN_META_KEYS)) return undefined;
  return { reg, era, id: id as string | number, args, modern: true };
}

/**
 * What the SDK's McpServer does for tools/call of a registered tool, minus the server and transport: the tool's
 * `run` parses the arguments with its input schema (a failure worded as the SDK words it), then the output schema
 * is checked on a result that is not an error.
 */
export async function runToolCall(call: FastCall, env: ToolEnv): Promise<CallToolResult> {
  const { reg } = call;
  const name = reg.tool.name;
  let result: CallToolResult;
  try {
    result = await reg.tool.run(call.args ?? {}, env, call.id);
  } catch (e) {
    return toolError(e instanceof Error ? e.message : String(e));
  }
  if (!result.isError) {
    if (result.structuredContent === undefined) {
      return toolError(
        `Output validation error: Tool ${name} has an output schema but no structured content was provided`,
      );
    }
    // The tool's own check first: the schema's parse was ~5 % of a call_api's CPU (issue 28).
    const output = reg.tool.outputAccepts?.(result.structuredContent)
      ? undefined
      : await reg.output['~standard'].validate(result.structuredContent);
    if (output?.issues?.length) {
      return toolError(
        `Output validation error: Invalid structured content for tool ${name}: ${issuesText(output.issues)}`,
      );
    }
  }
  return result;
}

/**
 * The JSON-RPC answer as the SDK serializes it: the result's members in its wire schema's order (content,
 * structuredContent, isError; content items as type, text), the modern codec's tail, then `jsonrpc` and `id`.
 * Our tools' results (mcp/result.ts ok/fail) carry no other members.
 */
export function answerBytes(call: FastCall, result: CallToolResult): string {
  const content = (result.content ?? []).map((c) => {
    if (c.type !== 'text') return c;
    const { type, text, ...rest } = c;
    return { type, text, ...rest };
  });
  // JSON.stringify({ content, structuredContent, isError }) written out, so the structured content's JSON that `ok`
  // already made is reused.
  let json = `{"content":${JSON.stringify(content)}`;
  if (result.structuredContent !== undefined)
    json += `,"structuredContent":${jsonOfStructured(result.structuredContent)}`;
  if (result.isError !== undefined) json += `,"isError":${JSON.stringify(result.isError)}`;
  json += call.modern ? `,${MODERN_RESULT_TAIL}}` : '}';
  return `{"result":${json},"jsonrpc":"2.0","id":${JSON.stringify(call.id)}}`;
}

/**
 * A request header by its lower-case name, every line of a repeated header joined, as the web Headers of the SDK
 * path give it: req.headers keeps only the first Host, Authorization or Content-Type, which would pass a request the
 * SDK path refuses. When no header name repeats (every client we know), req.headers (which node:http builds for
 * every request anyway) already holds each line as sent; only then is it read, else `headersDistinct` (which costs
 * a second pass over the raw headers per request) is.
 */
export function headerReader(req: IncomingMessage): (name: string) => string | undefined {
  const headers = req.headers;
  let lines = 0;
  for (const _ in headers) lines++;
  if (lines * 2 !== req.rawHeaders.length) return (name) => req.headersDistinct[name]?.join(', ');
  return (name) => {
    const v = headers[name];
    return typeof v === 'string' || v === undefined ? v : v.join(', ');
  };
}

function writeAnswer(res: ServerResponse, a: HttpAnswer): void {
  if (a.body === null) {
    res.writeHead(a.status, a.headers).end();
    return;
  }
  // `{ ...a.headers, 'content-length': n }` by assignment: on Node 20 a member added after a spread cost ~0.7 µs.
  const headers: Record<string, string | number> = Object.assign({}, a.headers);
  headers['content-length'] = Buffer.byteLength(a.body);
  // A string body goes out with the head in one socket write (node:http joins them); a Buffer would take a writev.
  res.writeHead(a.status, headers).end(a.body);
}

/**
 * The listener: the fast path for one tools/call, `fallback` (the Hono app's listener) for everything else.
 * `mark` (tests only) labels each fast answer with `x-svc-mcp-fast-path: 1`, so a test can tell which path answered.
 */
export function createFastToolCalls(
  deps: McpAppDeps,
  fallback: NodeListener,
  opts: { mark?: boolean } = {},
): NodeListener {
  const gate = createRequestGate(deps);
  const write = opts.mark
    ? (res: ServerResponse, a: HttpAnswer) =>
        writeAnswer(res, { ...a, headers: { ...a.headers, 'x-svc-mcp-fast-path': '1' } })
    : writeAnswer;

  const serve = async (req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> => {
    const text = raw.toString('utf8');
    const parsed = parseJsonBody(text);
    const header = headerReader(req);
    const call = parsed === undefined ? undefined : fastCallOf(header, parsed);
    if (!call) {
      (req as IncomingMessage & { rawBody?: Buffer }).rawBody = raw;
      fallback(req, res);
      return;
    }
    try {
      const gated = await gate({
        method: 'POST',
        header,
        text: async () => text,
        readBody: { text, parsed, era: call.era },
        requestOrigin: () => new URL(`http://${req.headers.host ?? ''}`).origin,
        ip: req.socket.remoteAddress ?? 'unknown',
      });
      if ('answer' in gated) return write(res, gated.answer);
      const result = await runToolCall(call, gated.pass.env);
      write(res, { status: 200, headers: { 'content-type': 'application/json' }, body: answerBytes(call, result) });
    } catch (e) {
      write(res, failureAnswer(deps.ctx, e));
    }
  };

  return (req, res) => {
    const length = Number(req.headers['content-length']);
    const host = req.headers.host;
    if (
      req.method !== 'POST' ||
      req.url !== '/mcp' ||
      !(length >= 0 && length <= FAST_BODY_CAP) ||
      host === undefined ||
      !PLAIN_HOST.test(host)
    ) {
      fallback(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void serve(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', () => res.destroy());
  };
}
