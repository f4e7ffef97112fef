/**
 * What a tool is (one definition serves both protocol eras) and what it gets to run. A tool is a thin adapter over
 * the control plane's use-case services, called in-process: the caller's principal and the input its schema parsed
 * go to the service, whose typed answer is the tool's output (`z.infer` of its output schema, checked by the
 * compiler). A refusal is the service's SvcError, turned into a tool error once, here, with the server's own next
 * step (mcp/next-step.ts). See docs/mcp.md, "How a tool runs".
 */
import type { z } from 'zod';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/server';
import type { Config } from '../core/config.js';
import type { AppContext } from '../control/context.js';
import type { Scope } from '../core/scopes.js';
import { SvcError } from '../core/errors.js';
import type { Principal } from '../control/auth/principal.js';
import type { Caller } from './auth.js';
import type { GatewayCalls } from '../core/gateway-calls.js';
import { fail, ok } from './result.js';
import { mcpNextStep } from './next-step.js';
import { REMOTE_BUCKETS, counter, histogram } from '../core/metrics.js';

export interface ToolEnv {
  ctx: AppContext;
  config: Readonly<Config>;
  gateway: GatewayCalls;
  caller: Caller;
  ip: string;
  /** Scopes the Idempotency-Key of gateway calls: the session id, else the caller's key id. */
  idempotencyScope: string;
  /** The 2025-era session this request belongs to and the key bound to it, if any (`null`: a stateless request). */
  session: { id: string; keyId: string | null } | null;
  /**
   * Binds a newly minted key to the 2025-era session (true), or says there is no session to bind it to (false).
   * From then on `caller` acts as that key.
   */
  bindKey(key: { id: string; plaintext: string; principal: Principal }): Promise<boolean>;
}

/** A tool's answer: its data (typed by its output schema) and an optional line of text for the agent. */
export interface Answer<T> {
  data: T;
  note?: string;
}

/** The tool as the servers see it (mcp/server.ts, mcp/fast-tool-call.ts): schemas for the wire, and `run`. */
export interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  annotations: ToolAnnotations;
  /** Checked in front of the transport too: a bare key gets HTTP 403 insufficient_scope (spec §7). */
  scope?: Extract<Scope, 'billing:write' | 'provider:write'>;
  /** Parses `args` with the input schema, runs the tool, answers a tool result (refusals as `isError`). */
  run(args: unknown, env: ToolEnv, rpcId: string | number): Promise<CallToolResult>;
  /**
   * A cheap check whose `true` implies the output schema accepts this structured content (it accepts a subset of
   * what the schema does), so the fast path (mcp/fast-tool-call.ts) may skip the schema; `false` only means the
   * schema decides, with its own wording.
   */
  outputAccepts?(structured: unknown): boolean;
}

/** The SDK's rendering of schema issues (its validateStandardSchema / formatIssue), so both paths word them alike. */
export function issuesText(
  issues: readonly { path?: readonly (PropertyKey | { key: PropertyKey })[] | undefined; message: string }[],
): string {
  return issues
    .map((i) =>
      i.path?.length
        ? `${i.path.map((p) => String(typeof p === 'object' ? p.key : p)).join('.')}: ${i.message}`
        : i.message,
    )
    .join(', ');
}

/** Whether every enumerable member of `o` is one of `allowed` (the fast paths' shape checks). */
export function keysWithin(o: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

export const toolError = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  scope?: ToolDef['scope'];
  outputAccepts?: ToolDef['outputAccepts'];
  /**
   * A hand-written parse of the arguments for the common case: exactly what the input schema's parse gives, or
   * undefined to let the schema decide (and word any failure).
   */
  parseInputFast?(args: unknown): z.infer<I> | undefined;
  run(args: z.infer<I>, env: ToolEnv, rpcId: string | number): Promise<z.infer<O> | Answer<z.infer<O>>>;
}): ToolDef {
  const { run, parseInputFast, ...meta } = def;
  const runTool = async (args: unknown, env: ToolEnv, rpcId: string | number): Promise<CallToolResult> => {
    const fast = parseInputFast?.(args ?? {});
    const parsed = fast !== undefined ? { success: true as const, data: fast } : def.input.safeParse(args ?? {});
    if (!parsed.success) {
      return toolError(
        `Input validation error: Invalid arguments for tool ${def.name}: ${issuesText(parsed.error.issues)}`,
      );
    }
    try {
      const out = await run(parsed.data, env, rpcId);
      return out instanceof Noted ? ok(out.data, out.note) : ok(out);
    } catch (e) {
      if (e instanceof SvcError) return refusal(e, def.name, env, slugOf(parsed.data));
      throw e;
    }
  };
  return {
    ...meta,
    async run(args, env, rpcId) {
      const started = performance.now();
      let result: CallToolResult | undefined;
      try {
        result = await runTool(args, env, rpcId);
        return result;
      } finally {
        observeToolCall(def.name, result, performance.now() - started, env);
      }
    },
  };
}

const toolCalls = counter('svc_mcp_tool_calls_total', 'MCP tools/call by tool and outcome', ['tool', 'outcome']);
const toolDuration = histogram(
  'svc_mcp_tool_call_duration_seconds',
  'MCP tools/call latency by tool',
  [...REMOTE_BUCKETS],
  ['tool'],
);

/**
 * Metrics and one log line per tools/call: ok, refused (a tool error), or failed (threw). A call_api line carries the
 * gateway's request id, so an operator follows one call from the MCP log into the gateway's.
 */
function observeToolCall(tool: string, result: CallToolResult | undefined, ms: number, env: ToolEnv): void {
  const outcome = result === undefined ? 'failed' : result.isError ? 'refused' : 'ok';
  toolCalls.inc({ tool, outcome });
  toolDuration.observe({ tool }, ms / 1000);
  const sc = result?.structuredContent as Record<string, unknown> | undefined;
  env.ctx.log.info('tool call', {
    tool,
    outcome,
    ms: Math.round(ms * 10) / 10,
    ...(typeof sc?.request_id === 'string' ? { gateway_request_id: sc.request_id } : {}),
    ...(typeof sc?.code === 'string' ? { error_code: sc.code } : {}),
  });
}

/** The listing a refusal is about, when the tool takes one (a 428's page is that listing's). */
function slugOf(args: object): string | undefined {
  return 'slug' in args && typeof args.slug === 'string' ? args.slug : undefined;
}

class Noted<T> implements Answer<T> {
  constructor(
    readonly data: T,
    readonly note: string,
  ) {}
}

/** Data with a line of text for the agent (e.g. "a person must open this URL"). */
export const noted = <T>(data: T, note: string): Answer<T> => new Noted(data, note);

/** A refusal as a tool error: the error's code, detail, problem members, and the server's next step in MCP terms. */
export function refusal(
  e: Pick<SvcError, 'code' | 'detail' | 'extra' | 'errors' | 'next'>,
  tool: string,
  env: Pick<ToolEnv, 'config'>,
  slug?: string,
): CallToolResult {
  return fail({
    ...(e.extra ?? {}),
    ...(e.errors ? { errors: e.errors } : {}),
    code: e.code,
    detail: e.detail,
    next: mcpNextStep(e, tool, { control: env.config.urls.control }, slug),
  });
}

export const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
export const WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};
