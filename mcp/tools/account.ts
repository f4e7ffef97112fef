/** Account tools: register, balance, buying credits (a person finishes in a browser), usage, caps, key provisioning. */
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { answer, defineTool, READ, rest, seg, WRITE, type ToolEnv } from '../tool-kit.js';
import { ok } from '../result.js';
import { KeyCapsSchema, KeyIdSchema, KeyResourceSchema } from '../../core/schemas/keys.schemas.js';
import { CheckoutInputSchema } from '../../core/schemas/billing.schemas.js';
import { UsageSummarySchema } from '../../core/schemas/usage.schemas.js';

const HUMAN = 'A person must open this URL in a browser to finish; call get_balance afterwards to see the effect.';

const Registered = z.looseObject({
  api_key: z.string().nullable(),
  key_id: z.string().nullable(),
  org_id: z.string(),
  scopes: z.array(z.string()),
  credit_cents: z.number().int(),
  bound_to_session: z.boolean(),
});

/** POST /v1/register, then bind the key to the 2025-era session (or hand it back for a stateless client to send). */
async function register(tool: string, env: ToolEnv): Promise<CallToolResult | Record<string, unknown>> {
  const a = await rest(env, 'POST', '/v1/register');
  if (a.status !== 201) return answer(tool, env, a);
  const reg = a.body as { api_key: string; key_id: string; org_id: string; scopes: string[]; credit_cents: number };
  const bound = await env.bindKey({ id: reg.key_id, plaintext: reg.api_key });
  return { ...reg, bound_to_session: bound };
}

const registerNote = (bound: boolean) =>
  bound
    ? 'Registered. This MCP session now acts as the new key (kept 30 days); store api_key, it is shown once.'
    : 'Registered. Send `Authorization: Bearer <api_key>` on every request from now on; api_key is shown once.';

export const accountTools = [
  defineTool({
    name: 'svc_register',
    title: 'Register an agent key',
    description:
      'Creates an org and an API key with 0 credits (same as POST /v1/register): free endpoints work at once; paid ones need credits (create_checkout) after a person verifies an email. Inside a session the key is bound to it; in a stateless request send it as the bearer afterwards.',
    input: z.object({}),
    output: Registered,
    annotations: WRITE,
    run: async (_a, env) => {
      const r = await register('svc_register', env);
      if ('content' in r) return r as CallToolResult;
      return ok(r, registerNote(r.bound_to_session as boolean));
    },
  }),
  defineTool({
    name: 'get_balance',
    title: 'Balance',
    description:
      "The org's credits in cents: settled, pending (awaiting email verification), reserved for in-flight calls, available; card and auto-reload state. Free.",
    input: z.object({}),
    output: z.looseObject({ org_id: z.string(), credit_cents: z.number().int(), available_cents: z.number().int() }),
    annotations: READ,
    run: async (_a, env) => answer('get_balance', env, await rest(env, 'GET', '/v1/billing/balance')),
  }),
  defineTool({
    name: 'create_checkout',
    title: 'Buy credits',
    description: `Starts a checkout for a credit pack (\`pack\`, see packs in get_balance's docs) or a custom \`amount_cents\`; needs billing:write (a verified email). ${HUMAN}`,
    input: CheckoutInputSchema,
    output: z.looseObject({ checkout_url: z.string(), payment_id: z.string(), human_action_required: z.literal(true) }),
    annotations: WRITE,
    scope: 'billing:write',
    run: async (a, env) =>
      answer(
        'create_checkout',
        env,
        await rest(env, 'POST', '/v1/billing/checkout', { body: a }),
        (b) => ({ ...b, human_action_required: true }),
        HUMAN,
      ),
  }),
  defineTool({
    name: 'billing_portal',
    title: 'Billing portal',
    description: `A billing portal URL for the org (cards, invoices); needs billing:write. ${HUMAN}`,
    input: z.object({}),
    output: z.looseObject({ portal_url: z.string(), human_action_required: z.literal(true) }),
    annotations: WRITE,
    scope: 'billing:write',
    run: async (_a, env) =>
      answer(
        'billing_portal',
        env,
        await rest(env, 'POST', '/v1/billing/portal'),
        (b) => ({ ...b, human_action_required: true }),
        HUMAN,
      ),
  }),
  defineTool({
    name: 'billing_setup',
    title: 'Add a card',
    description: `Starts a card setup; a person confirms the card, after which paid calls and auto-reload can use it; needs billing:write. ${HUMAN}`,
    input: z.object({}),
    output: z.looseObject({ setup_url: z.string(), human_action_required: z.literal(true) }),
    annotations: WRITE,
    scope: 'billing:write',
    run: async (_a, env) =>
      answer(
        'billing_setup',
        env,
        await rest(env, 'POST', '/v1/billing/setup'),
        (b) => ({ ...b, human_action_required: true }),
        HUMAN,
      ),
  }),
  defineTool({
    name: 'get_usage',
    title: 'Usage',
    description:
      'Usage of the org: totals, per API, per key, per day, and the latest calls with price and charge. `from` inclusive, `to` exclusive (ISO dates, UTC); default the last 30 days. Free.',
    input: z.object({
      from: z.string().max(40).optional().describe('e.g. 2026-11-01'),
      to: z.string().max(40).optional(),
    }),
    output: UsageSummarySchema,
    annotations: READ,
    run: async (a, env) => answer('get_usage', env, await rest(env, 'GET', '/v1/usage', { query: a })),
  }),
  defineTool({
    name: 'set_budget',
    title: 'Set spend caps',
    description:
      "Sets a key's caps in cents: lifetime `budget_cents`, `per_call_max_cents`, `daily_cap_cents` (null clears one). Defaults to the key this session acts as. The gateway refuses calls over a cap with 402.",
    input: z.object({
      key_id: KeyIdSchema.optional(),
      budget_cents: KeyCapsSchema.shape.budget_cents,
      per_call_max_cents: KeyCapsSchema.shape.per_call_max_cents,
      daily_cap_cents: KeyCapsSchema.shape.daily_cap_cents,
    }),
    output: KeyResourceSchema,
    annotations: { ...WRITE, idempotentHint: true },
    run: async ({ key_id, ...caps }, env) => {
      const id = key_id ?? env.caller.principal?.keyId;
      if (!id) {
        return answer('set_budget', env, {
          status: 400,
          headers: new Headers(),
          body: { code: 'validation_failed', detail: 'key_id: this caller acts as no key; give key_id' },
        });
      }
      return answer('set_budget', env, await rest(env, 'PATCH', `/v1/keys/${seg(id)}`, { body: caps }));
    },
  }),
  defineTool({
    name: 'provision_access',
    title: 'Ensure a key',
    description:
      'Makes sure this client has an API key: returns the key it acts as, or registers one (0 credits) and binds it to the session. With `slug`, also says whether that API needs terms accepted first.',
    input: z.object({ slug: z.string().min(1).max(80).optional() }),
    output: Registered.extend({ provisioned: z.boolean(), terms: z.looseObject({}).nullable() }),
    annotations: { ...WRITE, idempotentHint: true },
    run: async (a, env) => {
      let out: Record<string, unknown>;
      if (env.caller.key || env.caller.principal) {
        const me = await rest(env, 'GET', '/v1/me');
        if (me.status !== 200) return answer('provision_access', env, me);
        const m = me.body as { org: { id: string }; credential: { key_id: string | null; scopes: string[] } };
        const bal = (me.body as { balance: { credit_cents: number } }).balance;
        out = {
          api_key: null,
          key_id: m.credential.key_id,
          org_id: m.org.id,
          scopes: m.credential.scopes,
          credit_cents: bal.credit_cents,
          bound_to_session: false,
          provisioned: false,
        };
      } else {
        const r = await register('provision_access', env);
        if ('content' in r) return r as CallToolResult;
        out = { ...r, provisioned: true };
      }
      let terms: Record<string, unknown> | null = null;
      if (a.slug) {
        const t = await rest(env, 'GET', `/v1/apis/${seg(a.slug)}/terms`);
        if (t.status !== 200) return answer('provision_access', env, t);
        terms = t.body as Record<string, unknown>;
      }
      return ok(
        { ...out, terms },
        out.provisioned ? registerNote(out.bound_to_session as boolean) : 'This client already acts as a key.',
      );
    },
  }),
];
