/** What a tool is (one definition serves both protocol eras) and what it gets to run. */
import type { z } from 'zod';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/server';
import type { Config } from '../core/config.js';
import type { AppContext } from '../control/context.js';
import type { Scope } from '../core/scopes.js';
import type { Caller } from './auth.js';
import type { ControlCalls, ControlAnswer, QueryValue } from './control-calls.js';
import type { GatewayCalls } from './gateway-calls.js';
import { fail, isErrorCode, ok } from './result.js';
import { nextStepFor } from './next-step.js';

export interface ToolEnv {
  ctx: AppContext;
  config: Readonly<Config>;
  control: ControlCalls;
  gateway: GatewayCalls;
  caller: Caller;
  ip: string;
  /** Scopes the Idempotency-Key of gateway calls: the session id, else the caller's key id. */
  idempotencyScope: string;
  /** Binds a newly minted key to the 2025-era session (true), or says there is no session to bind it to (false). */
  bindKey(key: { id: string; plaintext: string }): Promise<boolean>;
}

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  annotations: ToolAnnotations;
  /** Checked in front of the transport too: a bare key gets HTTP 403 insufficient_scope (spec §7). */
  scope?: Extract<Scope, 'billing:write' | 'provider:write'>;
  run(args: Record<string, unknown>, env: ToolEnv, rpcId: string | number): Promise<CallToolResult>;
}

export function defineTool<I extends z.ZodObject>(def: {
  name: string;
  title: string;
  description: string;
  input: I;
  output: z.ZodObject;
  annotations: ToolAnnotations;
  scope?: ToolDef['scope'];
  run(args: z.infer<I>, env: ToolEnv, rpcId: string | number): Promise<CallToolResult>;
}): ToolDef {
  return def as unknown as ToolDef;
}

export const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
export const WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

/** A control answer as a tool result: 2xx data (arrays wrapped as `{ data }`), else the refusal with its next step. */
export function answer(
  tool: string,
  env: ToolEnv,
  a: ControlAnswer,
  shape?: (body: Record<string, unknown>) => Record<string, unknown>,
  note?: string,
): CallToolResult {
  if (a.status >= 200 && a.status < 300) {
    const body = Array.isArray(a.body)
      ? { data: a.body }
      : a.body && typeof a.body === 'object'
        ? (a.body as Record<string, unknown>)
        : { ok: true };
    return ok(shape ? shape(body) : body, note);
  }
  return refusal(tool, env, a.body, a.status);
}

export function refusal(tool: string, env: ToolEnv, body: unknown, status: number, slug?: string): CallToolResult {
  const p = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const code = isErrorCode(p.code) ? p.code : 'internal';
  const { type: _t, title: _ti, status: _s, code: _c, detail, ...extra } = p;
  return fail({
    ...extra,
    code,
    detail: typeof detail === 'string' ? detail : `HTTP ${status}`,
    next: nextStepFor(code, tool, { control: env.config.urls.control }, slug),
  });
}

/** Runs one /v1 operation as the caller. */
export function rest(
  env: ToolEnv,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  opts?: { query?: Record<string, QueryValue>; body?: unknown },
): Promise<ControlAnswer> {
  return env.control.call({ key: env.caller.key, principal: env.caller.principal, ip: env.ip }, method, path, opts);
}

export const seg = encodeURIComponent;
