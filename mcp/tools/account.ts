/** Account tools: register, verify an email, balance, buying credits (a person finishes in a browser), usage, caps, key provisioning. */
import { z } from 'zod';
import { defineTool, noted, READ, WRITE, type ToolEnv } from '../tool-kit.js';
import { KeyCapsSchema, KeyIdSchema, KeyResourceSchema } from '../../core/schemas/keys.schemas.js';
import {
  BalanceSchema,
  CardSetupResultSchema,
  CheckoutInputSchema,
  CheckoutResultSchema,
  PortalResultSchema,
} from '../../core/schemas/billing.schemas.js';
import { UsageQuerySchema, UsageSummarySchema } from '../../core/schemas/usage.schemas.js';
import { EmailVerifiedSchema, EmailSchema, type Registration } from '../../core/schemas/identity.schemas.js';
import { ListingTermsSchema } from '../../core/schemas/terms.schemas.js';
import { PAGE_DEFAULT_LIMIT } from '../../core/schemas/common.schemas.js';
import { SvcError } from '../../core/errors.js';
import { assertAuthenticated, principalFromToken } from '../../control/auth/principal.js';
import { takeAbuseLimit } from '../../control/auth/abuse-limits.js';
import { registerAnonymous, requestOrgEmail, verifyEmail } from '../../control/orgs/orgs.service.js';
import { describeMe } from '../../control/orgs/me.service.js';
import { billingStatus } from '../../control/billing/account.service.js';
import { startCheckout } from '../../control/billing/checkout.service.js';
import { openPortal, startCardSetup } from '../../control/billing/cards.service.js';
import { usageForWindow } from '../../control/usage/usage.service.js';
import { patchKey } from '../../control/keys/keys.service.js';
import { listingTerms } from '../../control/terms/terms.service.js';

const HUMAN = 'A person must open this URL in a browser to finish; call get_balance afterwards to see the effect.';
const human = { human_action_required: z.literal(true) };

const Registered = z.object({
  api_key: z.string().nullable().describe('Shown once; null when this client already acted as a key'),
  key_id: z.string().nullable(),
  org_id: z.string(),
  scopes: z.array(z.string()),
  credit_cents: z.number().int(),
  bound_to_session: z.boolean().describe('The 2025-era session now acts as this key'),
});

/** The control plane's public base (where checkout, setup and portal links send the person). */
const baseOf = (env: ToolEnv) => env.config.urls.control.replace(/\/+$/, '');

/** POST /v1/register's rule (one limit per client address), then the key bound to the session, if there is one. */
async function register(env: ToolEnv): Promise<Registration & { bound_to_session: boolean }> {
  takeAbuseLimit(env.ctx, 'register', env.ip);
  const reg = await registerAnonymous(env.ctx);
  const principal = await principalFromToken(env.ctx, reg.api_key);
  const bound = await env.bindKey({ id: reg.key_id, plaintext: reg.api_key, principal });
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
      'Creates an org and API key, 0 credits. Free. In a session the key is bound to it; stateless, send it as the bearer. Refused when this client already acts as a key, unless `replace: true`. Next: discover_tools; for paid APIs, verify_email.',
    input: z.object({
      replace: z
        .boolean()
        .optional()
        .describe('true: register a new org even though this client already acts as a key, and act as the new one'),
    }),
    output: Registered,
    annotations: WRITE,
    run: async ({ replace }, env) => {
      const p = env.caller.principal;
      if (p && replace !== true) {
        throw new SvcError(
          'conflict',
          `This client already acts as ${p.keyId ? `key ${p.keyId}` : 'a credential'} of org ${p.orgId}; registering would create another org. Call svc_register with replace: true to do that on purpose, or provision_access to see the current key.`,
        );
      }
      const r = await register(env);
      return noted(r, registerNote(r.bound_to_session));
    },
  }),
  defineTool({
    name: 'verify_email',
    title: 'Verify an email for this org',
    description:
      "Step 1 `email` (ask the person for it): mails them a token. Step 2 `token`: verifies it; this org's keys gain billing:write and provider:write. Free. Next: create_checkout.",
    input: z.object({
      email: EmailSchema.optional(),
      token: z.string().min(1).max(200).optional(),
    }),
    output: z.object({
      status: z.enum(['verification_sent', 'verified']),
      message: z.string(),
      verified: EmailVerifiedSchema.nullable(),
    }),
    annotations: WRITE,
    run: async ({ email, token }, env) => {
      if ((email === undefined) === (token === undefined)) {
        throw new SvcError('validation_failed', 'Give either email (step 1) or token (step 2)', {
          errors: [{ path: '', message: 'exactly one of email, token' }],
        });
      }
      if (email === undefined) {
        const verified = await verifyEmail(env.ctx, token ?? '');
        return {
          status: 'verified' as const,
          message: `Verified ${verified.email}: this org's keys now have billing:write and provider:write.`,
          verified,
        };
      }
      await requestOrgEmail(env.ctx, env.caller.principal, email);
      return {
        status: 'verification_sent' as const,
        message: `A token was mailed to ${email}. Ask the person for it, then call verify_email with token.`,
        verified: null,
      };
    },
  }),
  defineTool({
    name: 'get_balance',
    title: 'Balance',
    description: "The org's credits in cents (settled, pending, reserved, available), card and auto-reload. Free.",
    input: z.object({}),
    output: BalanceSchema,
    annotations: READ,
    run: async (_a, env) => billingStatus(env.ctx, env.caller.principal),
  }),
  defineTool({
    name: 'create_checkout',
    title: 'Buy credits',
    description:
      'A checkout URL for a credit `pack` or `amount_cents`; needs billing:write (verify_email). Free. A person pays in a browser; then get_balance.',
    input: CheckoutInputSchema,
    output: CheckoutResultSchema.extend(human),
    annotations: WRITE,
    scope: 'billing:write',
    run: async (a, env) => {
      const r = await startCheckout(env.ctx, env.caller.principal, a, baseOf(env));
      const data = {
        payment_id: r.payment.id,
        checkout_url: r.url,
        mode: env.ctx.payments.kind,
        pack: r.priced.pack?.id ?? null,
        amount_cents: r.priced.amountCents,
        credit_cents: r.priced.creditCents,
        human_action_required: true as const,
      };
      return noted(data, HUMAN);
    },
  }),
  defineTool({
    name: 'billing_portal',
    title: 'Billing portal',
    description: 'A billing portal URL (cards, invoices); needs billing:write. Free. A person opens it.',
    input: z.object({}),
    output: PortalResultSchema.extend(human),
    annotations: WRITE,
    scope: 'billing:write',
    run: async (_a, env) => {
      const r = await openPortal(env.ctx, env.caller.principal, baseOf(env));
      return noted({ portal_url: r.url, mode: env.ctx.payments.kind, human_action_required: true as const }, HUMAN);
    },
  }),
  defineTool({
    name: 'billing_setup',
    title: 'Add a card',
    description:
      'A card setup URL: a saved card pays calls and auto-reload; needs billing:write. Free. A person confirms it; then get_balance.',
    input: z.object({}),
    output: CardSetupResultSchema.extend(human),
    annotations: WRITE,
    scope: 'billing:write',
    run: async (_a, env) => {
      const r = await startCardSetup(env.ctx, env.caller.principal, baseOf(env));
      const data = {
        setup_id: r.payment.id,
        setup_url: r.url,
        mode: env.ctx.payments.kind,
        human_action_required: true as const,
      };
      return noted(data, HUMAN);
    },
  }),
  defineTool({
    name: 'get_usage',
    title: 'Usage',
    description:
      'Usage: totals, per API, per key, per day, latest calls with charges. `from` inclusive, `to` exclusive (ISO, UTC); default 30 days. Free.',
    input: UsageQuerySchema.pick({ from: true, to: true }),
    output: UsageSummarySchema,
    annotations: READ,
    run: async (a, env) => {
      return usageForWindow(env.ctx, env.caller.principal, { ...a, limit: PAGE_DEFAULT_LIMIT, offset: 0 });
    },
  }),
  defineTool({
    name: 'set_budget',
    title: 'Set spend caps',
    description:
      "Sets a key's caps in cents (null clears one); default the key this client acts as. Free. A capped key may only lower caps: a person raises them on the web.",
    input: z.object({
      key_id: KeyIdSchema.optional(),
      budget_cents: KeyCapsSchema.shape.budget_cents,
      per_call_max_cents: KeyCapsSchema.shape.per_call_max_cents,
      daily_cap_cents: KeyCapsSchema.shape.daily_cap_cents,
    }),
    output: KeyResourceSchema,
    annotations: { ...WRITE, idempotentHint: true },
    run: async ({ key_id, ...caps }, env) => {
      // The default needs to know who is calling; the service checks what that caller may do.
      const p = assertAuthenticated(env.caller.principal);
      const id = key_id ?? p.keyId;
      if (!id) {
        throw new SvcError('validation_failed', 'key_id: this caller acts as no key; give key_id', {
          errors: [{ path: 'key_id', message: 'required when the caller acts as no key' }],
        });
      }
      return patchKey(env.ctx.db, p, id, caps, env.ctx.clock.now());
    },
  }),
  defineTool({
    name: 'provision_access',
    title: 'Ensure a key',
    description:
      "The key this client acts as, or a new one (0 credits) bound to the session; with `slug`, that API's terms status. Free. Next: call_api.",
    input: z.object({ slug: z.string().min(1).max(80).optional() }),
    output: Registered.extend({ provisioned: z.boolean(), terms: ListingTermsSchema.nullable() }),
    annotations: { ...WRITE, idempotentHint: true },
    run: async (a, env) => {
      const current = env.caller.principal;
      let out: z.infer<typeof Registered> & { provisioned: boolean };
      if (current) {
        const me = await describeMe(env.ctx, current);
        out = {
          api_key: null,
          key_id: me.credential.key_id,
          org_id: me.org.id,
          scopes: me.credential.scopes,
          credit_cents: me.balance.credit_cents,
          bound_to_session: current.keyId !== null && env.session?.keyId === current.keyId,
          provisioned: false,
        };
      } else {
        out = { ...(await register(env)), provisioned: true };
      }
      const p = env.caller.principal;
      const terms = a.slug && p ? await listingTerms(env.ctx.db, p, a.slug) : null;
      const note = out.provisioned ? registerNote(out.bound_to_session) : 'This client already acts as a key.';
      return noted({ ...out, terms }, note);
    },
  }),
];
