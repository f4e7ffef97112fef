/**
 * The next step of a refusal in MCP terms: a tool to call, or a page a person opens. When the server attached one
 * (an SvcError's `next`, a gateway problem's `next`: core/next-step.ts), that step is rendered, exhaustively, and
 * never replaced. Only a refusal that carries none gets this surface's default for its code (and, for `not_found`,
 * for the tool that was called: an unknown key id is not found by searching the catalog).
 */
import type { ErrorCode } from '../core/errors.js';
import { assertNever, type NextStep } from '../core/next-step.js';
import type { McpNextStep } from './result.js';

export interface NextUrls {
  /** The control plane's public origin: pages a person opens live there. */
  control: string;
}

/** What the renderer needs of a refusal: its code and the server's own next step, if any. */
export interface Refused {
  code: ErrorCode;
  next?: NextStep | undefined;
}

const base = (urls: NextUrls) => urls.control.replace(/\/+$/, '');

/** The server's step, in MCP terms. Adding an action to core/next-step.ts makes this switch fail to compile. */
export function renderNextStep(next: NextStep, urls: NextUrls, tool: string): McpNextStep {
  switch (next.action) {
    case 'authenticate':
      return {
        tool: 'svc_register',
        hint: 'send an API key (svc_live_…) as the bearer or sign in through OAuth; without one, svc_register makes a key',
      };
    case 'log_in':
      return { url: `${base(urls)}/login`, hint: 'this needs a person signed in on the web; an API key cannot do it' };
    case 'verify_email':
      return {
        tool: 'verify_email',
        hint: 'ask the person for their email and call verify_email with it; they get a token by mail, then call verify_email with the token. This key then gains billing:write and provider:write',
      };
    case 'ask_org_admin':
      return {
        url: `${base(urls)}/dashboard`,
        hint: 'only an owner or admin of this org can do this: ask one to do it signed in on the web',
      };
    case 'get_key':
      return {
        tool: 'svc_register',
        hint: 'this key no longer works: send another key, or register a new one (replace: true where a key is bound)',
      };
    case 'buy_credits':
      return { tool: 'create_checkout', hint: 'buy credits (a person completes the checkout), then retry' };
    case 'add_card':
      return { tool: 'billing_setup', hint: 'a person adds a card, then retry' };
    case 'raise_cap':
      return {
        url: `${base(urls)}/dashboard/keys`,
        hint: `a capped key cannot raise its own ${next.cap} cap: a person signed in on the web raises it on the keys page, then retry`,
      };
    case 'accept_terms':
      return {
        url: `${base(urls)}/apis/${encodeURIComponent(next.slug)}`,
        hint: "an org owner or admin signs in and accepts the provider's terms on this page, then retry",
      };
    case 'check_price':
      return { tool: 'get_schema', hint: 'check the current price, then retry with a higher max_price_cents' };
    case 'find_listing':
      return { tool: 'search_apis', hint: 'find the right slug' };
    case 'list_endpoints':
      return { tool: 'get_schema', hint: `list the endpoints of ${next.slug}` };
    case 'retry_later':
      return { tool, hint: 'wait for the time in the detail, then retry' };
    default:
      return assertNever(next);
  }
}

/** Not found, by the tool that looked: where the right id or name can be found. */
const NOT_FOUND: Record<string, (urls: NextUrls) => McpNextStep> = {
  set_budget: () => ({
    tool: 'set_budget',
    hint: 'key_id names no key of this org; omit it to cap the key you act as',
  }),
  get_my_profile: () => ({ tool: 'update_my_profile', hint: 'this org has no provider profile yet: set one' }),
  get_provider_profile: () => ({ tool: 'list_providers', hint: 'find the provider slug in the directory' }),
  provider_cancel_pending_pricing: () => ({
    tool: 'provider_get_api',
    hint: 'nothing is pending for this endpoint: provider_get_api lists the pending increases and endpoint ids',
  }),
};
const PROVIDER_NOT_FOUND: McpNextStep = { tool: 'provider_list_apis', hint: 'find your api_id' };
const CATALOG_NOT_FOUND: McpNextStep = { tool: 'search_apis', hint: 'find the right slug' };
const CATALOG_TOOLS = new Set(['get_api_details', 'get_schema', 'call_api', 'run_probe', 'provision_access']);

function notFound(tool: string, urls: NextUrls): McpNextStep {
  const specific = NOT_FOUND[tool];
  if (specific) return specific(urls);
  if (tool.startsWith('provider_')) return PROVIDER_NOT_FOUND;
  if (CATALOG_TOOLS.has(tool)) return CATALOG_NOT_FOUND;
  return { tool, hint: 'the detail names what was not found; check that id or name' };
}

/** This surface's step for a refusal that carries none of the server's. */
function byCode(code: ErrorCode, tool: string, urls: NextUrls, slug: string | undefined): McpNextStep {
  switch (code) {
    case 'unauthorized':
    case 'api_key_required':
      return renderNextStep({ action: 'authenticate' }, urls, tool);
    case 'insufficient_scope':
      return renderNextStep({ action: 'verify_email' }, urls, tool);
    case 'insufficient_credits':
      return { tool: 'create_checkout', hint: 'buy credits (a person completes the checkout), then retry' };
    case 'card_required':
      return { tool: 'billing_setup', hint: 'a person adds a card, then retry' };
    case 'budget_exceeded':
    case 'per_call_cap_exceeded':
    case 'daily_cap_exceeded':
    case 'cap_escalation':
      // A key with a cap is a constrained key, which may only lower caps (docs/identity.md): a person raises it.
      return {
        url: `${base(urls)}/dashboard/keys`,
        hint: "a capped key cannot raise its own caps: a person signed in on the web raises this key's cap on the keys page (or with `svc keys update`), then retry",
      };
    case 'price_above_max':
      return { tool: 'get_schema', hint: 'check the current price, then retry with a higher max_price_cents' };
    case 'terms_not_accepted':
      return {
        url: `${base(urls)}/apis/${encodeURIComponent(slug ?? '')}`,
        hint: "an org owner or admin signs in and accepts the provider's terms on this page, then retry",
      };
    case 'listing_not_found':
      return CATALOG_NOT_FOUND;
    case 'not_found':
      return notFound(tool, urls);
    case 'endpoint_not_found':
      return { tool: 'get_schema', hint: 'list the endpoints of this API' };
    case 'accept_terms_required':
      return { tool: 'provider_publish', hint: 'call again with accept_terms: true' };
    case 'verification_failed':
      return { tool: 'provider_get_api', hint: 'check base_url and credentials, or publish with skip_verify' };
    case 'rate_limited':
    case 'too_many_attempts':
      return { tool, hint: 'wait for the time in the detail, then retry' };
    default:
      return { tool, hint: 'fix what the detail names, or retry if it was transient' };
  }
}

/** The step for a refusal of `tool`: the server's, rendered, else this surface's default for the code. */
export function mcpNextStep(e: Refused, tool: string, urls: NextUrls, slug?: string): McpNextStep {
  return e.next ? renderNextStep(e.next, urls, tool) : byCode(e.code, tool, urls, slug);
}
