/** The next step an agent should take after a refusal, worded in MCP terms (a tool name, or a URL for a human). */
import type { ErrorCode } from '../core/errors.js';
import type { NextStep } from './result.js';

export interface NextUrls {
  control: string;
}

export function nextStepFor(code: ErrorCode, tool: string, urls: NextUrls, slug?: string): NextStep {
  switch (code) {
    case 'unauthorized':
    case 'api_key_required':
      return { tool: 'svc_register', hint: 'get an API key (or sign in through OAuth), then retry' };
    case 'key_revoked':
      return { tool: 'provision_access', hint: 'this key is revoked; get a working key' };
    case 'insufficient_scope':
      return {
        url: `${urls.control}/v1/auth/email`,
        hint: 'a person verifies an email for this org (OAuth sign-in does it too); the same key then gains billing:write and provider:write',
      };
    case 'insufficient_credits':
      return { tool: 'create_checkout', hint: 'buy credits (a person completes the checkout), then retry' };
    case 'card_required':
      return { tool: 'billing_setup', hint: 'a person adds a card, then retry' };
    case 'budget_exceeded':
    case 'per_call_cap_exceeded':
    case 'daily_cap_exceeded':
      return { tool: 'set_budget', hint: "raise this key's cap if the spend is intended" };
    case 'price_above_max':
      return { tool: 'get_schema', hint: 'check the current price, then retry with a higher max_price_cents' };
    case 'terms_not_accepted':
      return {
        url: `${urls.control}/v1/apis/${slug ?? '{slug}'}/terms`,
        hint: "an org owner or admin accepts the provider's terms with a session (svc terms accept), then retry",
      };
    case 'listing_not_found':
    case 'not_found':
      return { tool: 'search_apis', hint: 'find the right slug or id' };
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
