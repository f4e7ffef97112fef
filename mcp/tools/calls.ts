/** call_api and run_probe: a real call through the gateway with the caller's key (metered, capped, idempotent). */
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { defineTool, refusal, type ToolEnv } from '../tool-kit.js';
import { fail, ok } from '../result.js';
import { nextStepFor } from '../next-step.js';
import { idempotencyKeyOf } from '../gateway-calls.js';

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

const CallResult = z.looseObject({
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  body_encoding: z.enum(['utf8', 'base64']),
  body_truncated: z.boolean(),
  price_cents: z.number().int().nullable(),
  charged_cents: z.number().int(),
  balance_cents: z.number().int().nullable(),
});

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

async function viaGateway(tool: string, a: CallArgs, env: ToolEnv, rpcId: string | number): Promise<CallToolResult> {
  const key = env.caller.key;
  if (!key) {
    return fail({
      code: env.caller.principal ? 'api_key_required' : 'unauthorized',
      detail: env.caller.principal
        ? 'This OAuth grant has no API key svc can send to the gateway; create one with the control plane and send it as the bearer'
        : 'Calls go through the gateway with an API key: register first',
      next: nextStepFor('unauthorized', tool, { control: env.config.urls.control }),
    });
  }
  const method = a.method.toUpperCase();
  const rest: Record<string, unknown> = { ...(a.input ?? {}) };
  let path = await resolvePath(env, a.slug, a.endpoint);
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
  if (g.problem) return refusal(tool, env, g.problem, g.status, a.slug);
  const { problem: _p, ...result } = g;
  const note =
    `HTTP ${g.status} from ${a.slug}${path}; charged ${g.charged_cents} cents` +
    (g.balance_cents === null ? '' : `, balance ${g.balance_cents} cents`) +
    (g.body_truncated ? `; body cut to the first 64 KiB of ${g.body_bytes} bytes` : '');
  return ok(result, note);
}

export const callTools = [
  defineTool({
    name: 'call_api',
    title: 'Call an API',
    description:
      "Calls a listed API through the metered gateway with this client's key and charges the endpoint's price (see get_schema; free endpoints cost 0). A client retry of the same request is not charged twice. Answers the upstream status, key headers, body (text or base64, first 64 KiB), charged cents and balance left. 402 → create_checkout or set_budget; 428 → a person accepts the terms.",
    input: z.object({
      slug: Slug,
      endpoint: Endpoint,
      method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).optional().describe('Default GET'),
      input: Input,
      max_price_cents: MaxPrice,
    }),
    output: CallResult,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    run: (a, env, rpcId) =>
      viaGateway(
        'call_api',
        { ...a, method: a.method ?? 'GET', input: a.input, max_price_cents: a.max_price_cents },
        env,
        rpcId,
      ),
  }),
  defineTool({
    name: 'run_probe',
    title: 'Probe an endpoint (GET)',
    description:
      'A GET test call through the gateway, metered like call_api (the GET price applies). Use it to check that an API answers before relying on it.',
    input: z.object({ slug: Slug, endpoint: Endpoint, input: Input, max_price_cents: MaxPrice }),
    output: CallResult,
    annotations: { readOnlyHint: true, openWorldHint: true },
    run: (a, env, rpcId) =>
      viaGateway('run_probe', { ...a, method: 'GET', input: a.input, max_price_cents: a.max_price_cents }, env, rpcId),
  }),
];
