/**
 * Calls to the control plane (`/v1`). The session token is used when both credentials are configured (spec §5);
 * a problem+json refusal becomes a CliFailure carrying the server's code, status and the next command to run.
 * Every answer is parsed with the operation's output schema from core/schemas (the same one the route declares):
 * an answer of another shape is a clear `unexpected_answer` failure, never a cast.
 */
import type { z } from 'zod';
import { type ResolvedConfig, loadConfig } from './config-store.js';
import { CliFailure } from './failure.js';
import { isProblem, readAll, send } from './http.js';
import { type NextHint, forPeople, nextCommand } from './next-step.js';

export type AuthMode = 'auto' | 'session' | 'key' | 'none';

export interface ApiOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined | null>;
  auth?: AuthMode;
  hint?: NextHint;
  /** Override the configured credential (e.g. checking a pasted key before storing it). */
  token?: string;
}

let cached: ResolvedConfig | undefined;
export function config(): ResolvedConfig {
  cached ??= loadConfig();
  return cached;
}
/** After `saveConfig`, so later calls in the same command see the new credentials. */
export function reloadConfig(): ResolvedConfig {
  cached = loadConfig();
  return cached;
}

function _token(cfg: ResolvedConfig, auth: AuthMode): string | null {
  if (auth === 'none') return null;
  if (auth === 'session') return cfg.sessionToken;
  if (auth === 'key') return cfg.apiKey;
  return cfg.sessionToken ?? cfg.apiKey;
}

export function withQuery(path: string, query: ApiOptions['query']): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

export async function api<S extends z.ZodType>(
  method: string,
  path: string,
  schema: S,
  opts: ApiOptions = {},
): Promise<z.output<S>> {
  const cfg = config();
  const token = opts.token ?? _token(cfg, opts.auth ?? 'auto');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await send(cfg.apiUrl + withQuery(path, opts.query), { method, headers, ...(body ? { body } : {}) });
  const text = (await readAll(res)).toString('utf8');
  const status = res.statusCode ?? 0;
  if (status >= 400) throw failureFrom(status, text, isProblem(res), opts.hint);
  return parseAnswer(schema, text, status);
}

/** A JSON answer checked against its output schema; anything else is `unexpected_answer` (exit 1). */
export function parseAnswer<S extends z.ZodType>(schema: S, text: string, status: number): z.output<S> {
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw unexpected('it is not JSON', status);
  }
  const r = schema.safeParse(json);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw unexpected(`${where}${issue?.message ?? 'wrong shape'}`, status);
}

function unexpected(why: string, status: number): CliFailure {
  return new CliFailure(
    'api',
    'unexpected_answer',
    `The server's answer is not what this version of svc understands (${why}); the CLI and the server may be different versions`,
    status,
    'svc --version',
  );
}

export function failureFrom(status: number, text: string, problem: boolean, hint: NextHint = {}): CliFailure {
  let parsed: Record<string, unknown> = {};
  try {
    const v: unknown = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) parsed = v as Record<string, unknown>;
  } catch {
    /* not JSON */
  }
  const code = problem && typeof parsed.code === 'string' ? parsed.code : `http_${status}`;
  const title = typeof parsed.title === 'string' && parsed.title ? parsed.title : null;
  const detail = typeof parsed.detail === 'string' && parsed.detail ? parsed.detail : null;
  const message = forPeople(detail) || title || `The server refused (${status})`;
  const requestId = typeof parsed.request_id === 'string' ? parsed.request_id : null;
  return new CliFailure('api', code, message, status, nextCommand(code, parsed.next, hint), requestId);
}
