/** call_api and run_probe: a real call through the gateway with the caller's key (metered, capped, idempotent). */
import { z } from 'zod';
import { defineTool, keysWithin, noted, type ToolEnv } from '../tool-kit.js';
import { CODES, SvcError, type ErrorCode } from '../../core/errors.js';
import { NextStepSchema } from '../../core/next-step.js';
import { billingStatus } from '../../control/billing/account.service.js';
import { idempotencyKeyOf } from '../../core/gateway-calls.js';

const Input = z
  .record(z.string(), z.unknown())
  .optional()
  .describe(
    'Arguments: `{name}` path parameters are filled from it; for GET/HEAD/DELETE the rest become query parameters, otherwise the JSON body',
  );
const MaxPrice = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe('Refuse (402 price_above_max, nothing charged) if the current price is above this');
const Slug = z.string().min(1).max(80).describe('Listing slug');
const Endpoint = z
  .string()
  .min(1)
  .max(500)
  .describe('Endpoint path from get_schema, e.g. /current or /users/{id} (an ep_… id works too)');

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
const METHOD_SET: ReadonlySet<unknown> = new Set(METHODS);

export const CallApiInput = z.object({
  slug: Slug,
  endpoint: Endpoint,
  method: z.enum(METHODS).optional().describe('Default GET'),
  input: Input,
  max_price_cents: MaxPrice,
});
export const RunProbeInput = z.object({ slug: Slug, endpoint: Endpoint, input: Input, max_price_cents: MaxPrice });
type CallApiArgs = z.infer<typeof CallApiInput>;

const CALL_API_MEMBERS: ReadonlySet<string> = new Set(Object.keys(CallApiInput.shape));
const RUN_PROBE_MEMBERS: ReadonlySet<string> = new Set(Object.keys(RunProbeInput.shape));

const isPlainRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
/** A string schema's length bounds, read from it once (zod computes them per read), so the fast parse cannot drift. */
const lengthsOf = (schema: z.ZodString) => ({ min: schema.minLength ?? 0, max: schema.maxLength ?? Infinity });
const SLUG_LENGTHS = lengthsOf(Slug);
const ENDPOINT_LENGTHS = lengthsOf(Endpoint);
const isStringWithin = (v: unknown, b: { min: number; max: number }): v is string =>
  typeof v === 'string' && v.length >= b.min && v.length <= b.max;

/**
 * What CallApiInput's (or RunProbeInput's) parse gives for plain JSON arguments, built by hand (the zod parse was
 * ~4 % of a call_api's CPU, issue 28): the members present, in the schema's order, `input` copied as the record
 * schema copies it. Undefined for anything unusual (an unknown member, which the schema strips; a value of the wrong
 * type or length; an `input` with a `__proto__` or symbol member), and the schema decides. The unit test in
 * test/unit/mcp/call-api-hot-path.test.ts holds it to the schema's parse.
 */
export function parseCallArgsFast(args: unknown, withMethod: boolean): CallApiArgs | undefined {
  if (!isPlainRecord(args)) return undefined;
  if (!keysWithin(args, withMethod ? CALL_API_MEMBERS : RUN_PROBE_MEMBERS)) return undefined;
  const { slug, endpoint } = args;
  if (!isStringWithin(slug, SLUG_LENGTHS) || !isStringWithin(endpoint, ENDPOINT_LENGTHS)) return undefined;
  const out: CallApiArgs = { slug, endpoint };
  if (withMethod && 'method' in args) {
    const method = args.method;
    if (!METHOD_SET.has(method)) return undefined;
    out.method = method as CallApiArgs['method'];
  }
  if ('input' in args) {
    const input = args.input;
    if (!isPlainRecord(input) || Object.hasOwn(input, '__proto__') || Object.getOwnPropertySymbols(input).length > 0)
      return undefined;
    out.input = Object.assign({}, input);
  }
  if ('max_price_cents' in args) {
    const max = args.max_price_cents;
    if (!Number.isSafeInteger(max) || (max as number) < 0) return undefined;
    out.max_price_cents = max as number;
  }
  return out;
}

const isErrorCode = (c: unknown): c is ErrorCode => typeof c === 'string' && Object.hasOwn(CODES, c);

export const CallResult = z.looseObject({
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  body_encoding: z.enum(['utf8', 'base64']),
  body_truncated: z.boolean(),
  price_cents: z.number().int().nullable(),
  charged_cents: z.number().int(),
  balance_cents: z.number().int().nullable(),
});

const isInt = (v: unknown): boolean => Number.isSafeInteger(v);
const isIntOrNull = (v: unknown): boolean => v === null || Number.isSafeInteger(v);

/** An object whose own members (enumerable or not) are all string-keyed strings, with Object's own prototype. */
function isStringRecord(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Object.getPrototypeOf(v) !== Object.prototype) return false;
  for (const k of Reflect.ownKeys(v)) {
    if (typeof k !== 'string' || typeof (v as Record<string, unknown>)[k] !== 'string') return false;
  }
  return true;
}

/**
 * A subset of what CallResult accepts, checked by hand: true implies the schema's parse succeeds (each member read
 * once, as the parse reads it), so the fast path skips that parse. test/unit/mcp/call-api-hot-path.test.ts pins it.
 */
export function callResultAccepts(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  return (
    isInt(r.status) &&
    isStringRecord(r.headers) &&
    typeof r.body === 'string' &&
    (r.body_encoding === 'utf8' || r.body_encoding === 'base64') &&
    typeof r.body_truncated === 'boolean' &&
    isIntOrNull(r.price_cents) &&
    isInt(r.charged_cents) &&
    isIntOrNull(r.balance_cents)
  );
}

/**
 * `{ ...a, method, input: a.input, max_price_cents: a.max_price_cents }`: the same members in the same order (the
 * idempotency key hashes their JSON), built by assignment instead, because on Node 20 a spread literal followed by
 * members the spread object lacks took ~0.7 µs per such member (issue 28).
 */
export function callArgs(
  a: { slug: string; endpoint: string; input?: Record<string, unknown>; max_price_cents?: number },
  method: string,
): CallArgs {
  const args: Partial<CallArgs> = Object.assign({}, a);
  args.method = method;
  args.input = a.input;
  args.max_price_cents = a.max_price_cents;
  return args as CallArgs;
}

interface CallArgs {
  slug: string;
  endpoint: string;
  method: string;
  input: Record<string, unknown> | undefined;
  max_price_cents: number | undefined;
}

async function resolvePath(env: ToolEnv, slug: string, endpoint: string): Promise<string> {
  if (!endpoint.startsWith('ep_')) return endpoint.startsWith('/') ? endpoint : `/${endpoint}`;
  const row = await env.ctx.db
    .selectFrom('endpoints')
    .innerJoin('apis', 'apis.id', 'endpoints.api_id')
    .select('endpoints.path')
    .where('endpoints.id', '=', endpoint)
    .where('apis.slug', '=', slug)
    .executeTakeFirst();
  return row?.path ?? `/${endpoint}`;
}

/** A gateway refusal (problem+json with our code) as the error it is, keeping the gateway's own next step. */
function gatewayRefusal(problem: Record<string, unknown>): SvcError {
  const { type: _t, title: _ti, status: _s, code, detail, next, errors: _e, ...extra } = problem;
  const step = NextStepSchema.safeParse(next);
  return new SvcError(isErrorCode(code) ? code : 'internal', typeof detail === 'string' ? detail : undefined, {
    extra,
    ...(step.success ? { next: step.data } : {}),
  });
}

async function viaGateway(tool: string, a: CallArgs, env: ToolEnv, rpcId: string | number) {
  const key = env.caller.key;
  if (!key) {
    throw env.caller.principal
      ? new SvcError(
          'api_key_required',
          'This OAuth grant has no API key svc can send to the gateway; create one with the control plane and send it as the bearer',
        )
      : new SvcError('unauthorized', 'Calls go through the gateway with an API key: register first', {
          next: { action: 'authenticate' },
        });
  }
  const method = a.method.toUpperCase();
  const rest: Record<string, unknown> = { ...(a.input ?? {}) };
  let path = await resolvePath(env, a.slug, a.endpoint);
  // A parameter missing from `input` stays a placeholder, which the gateway refuses before any charge
  // (gateway/steps/checks.ts unfilledParameter: the one place of that rule).
  if (path.includes('{'))
    path = path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      const v = rest[name];
      delete rest[name];
      return encodeURIComponent(v === undefined ? `{${name}}` : String(v));
    });
  const inQuery = method === 'GET' || method === 'HEAD' || method === 'DELETE';
  const query: Record<string, string> = {};
  if (inQuery) {
    for (const [k, v] of Object.entries(rest)) query[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  const g = await env.gateway.call({
    key,
    slug: a.slug,
    method,
    path,
    query,
    body: inQuery || a.input === undefined ? undefined : rest,
    idempotencyKey: idempotencyKeyOf(env.idempotencyScope, rpcId, tool, a),
    maxPriceCents: a.max_price_cents,
  });
  if (g.problem) throw gatewayRefusal(g.problem);
  const { problem: _p, ...result } = g;
  // A replay carries the first answer, not a balance: report the org's balance now, as a fresh call does.
  if (result.balance_cents === null && result.idempotent_replay && env.caller.principal) {
    result.balance_cents = (await billingStatus(env.ctx, env.caller.principal)).credit_cents;
  }
  const note =
    `HTTP ${g.status} from ${a.slug}${path}; charged ${g.charged_cents} cents` +
    (result.balance_cents === null ? '' : `, balance ${result.balance_cents} cents`) +
    (g.idempotent_replay ? ' (a replay of the first answer: not charged again)' : '') +
    (g.body_truncated ? `; body cut to the first 64 KiB of ${g.body_bytes} bytes` : '');
  return noted(result, note);
}

export const callTools = [
  defineTool({
    name: 'call_api',
    title: 'Call an API',
    description:
      "Calls an API through the metered gateway and charges the endpoint's price (get_schema; 0 = free); a retry of the same request is not charged twice. Answers status, headers, body (first 64 KiB), charged cents, balance. A refusal names its next step.",
    input: CallApiInput,
    parseInputFast: (args) => parseCallArgsFast(args, true),
    output: CallResult,
    outputAccepts: callResultAccepts,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    run: (a, env, rpcId) => viaGateway('call_api', callArgs(a, a.method ?? 'GET'), env, rpcId),
  }),
  defineTool({
    name: 'run_probe',
    title: 'Probe an endpoint (GET)',
    description:
      'A GET test call, metered and charged like call_api: checks that an API answers before you rely on it.',
    input: RunProbeInput,
    parseInputFast: (args) => parseCallArgsFast(args, false),
    output: CallResult,
    outputAccepts: callResultAccepts,
    annotations: { readOnlyHint: true, openWorldHint: true },
    run: (a, env, rpcId) => viaGateway('run_probe', callArgs(a, 'GET'), env, rpcId),
  }),
];
