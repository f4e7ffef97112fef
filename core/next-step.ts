/**
 * What the caller can do about an error, as data: one closed set of actions that every surface renders in its own
 * words, through one exhaustive renderer per surface (a REST path here, a link on a page here, a command in
 * cli/next-step.ts, a tool in mcp/). Services and the gateway attach one to an SvcError
 * (`new SvcError(code, detail, { next })`); the problem body carries it as `next`. A surface renders the step the
 * server sent and never replaces it with a guess of its own.
 * Adding an action means adding it here and to docs/errors.md; TypeScript's exhaustive switches (`assertNever`)
 * point at every renderer that must word it.
 */
import { z } from 'zod';

const slug = z.string().min(1).max(200);

export const NextStepSchema = z.discriminatedUnion('action', [
  /** Send a credential: an API key (svc_live_…) or a session token (sess_…). */
  z.object({ action: z.literal('authenticate') }),
  /** A human session is needed: request a login code by email and exchange it for a session. */
  z.object({ action: z.literal('log_in') }),
  /** Verify an email address for the org: that adds the billing:write and provider:write scopes. */
  z.object({ action: z.literal('verify_email') }),
  /** Only an org owner or admin may do this: ask one (they act on the dashboard). */
  z.object({ action: z.literal('ask_org_admin') }),
  /** This credential cannot be used here (a revoked key; a session token on the gateway): get a working key. */
  z.object({ action: z.literal('get_key') }),
  /** The org's credits do not cover the call: a person buys credits. */
  z.object({ action: z.literal('buy_credits') }),
  /** A card on file is needed: a person adds one. */
  z.object({ action: z.literal('add_card') }),
  /**
   * The key's own cap refused the call. A capped key cannot raise its own cap (`cap_escalation`): a person with a
   * session (or an uncapped key) raises it on the keys page.
   */
  z.object({ action: z.literal('raise_cap'), cap: z.enum(['budget', 'per_call', 'daily', 'approval_mode']) }),
  /** The listing's required terms are not accepted: an org owner or admin accepts them on the listing's page. */
  z.object({ action: z.literal('accept_terms'), slug }),
  /** The price is above the caller's maximum: read the current price, then retry with a higher maximum. */
  z.object({ action: z.literal('check_price'), slug }),
  /** No such listing: search the catalog for the right one. */
  z.object({ action: z.literal('find_listing') }),
  /** No such endpoint on this listing: list its endpoints. */
  z.object({ action: z.literal('list_endpoints'), slug }),
  /** Too many requests: wait for Retry-After, then retry the same call. */
  z.object({ action: z.literal('retry_later') }),
]);

export type NextStep = z.infer<typeof NextStepSchema>;
export type NextAction = NextStep['action'];

/** For the `default` of an exhaustive switch over actions: a new action is a compile error here. */
export function assertNever(x: never): never {
  throw new Error(`unhandled next step ${JSON.stringify(x)}`);
}

const CAP_FIELD = {
  budget: 'budget_cents',
  per_call: 'per_call_max_cents',
  daily: 'daily_cap_cents',
  approval_mode: 'approval_mode',
} as const;

/** The REST wording (control plane and gateway), appended to the problem's `detail`. */
export function restNextStep(next: NextStep): string {
  switch (next.action) {
    case 'authenticate':
      // A key works on every REST surface (the gateway refuses sess_ tokens with api_key_required), and a caller
      // without one gets one here without an account: the next-step walker follows this wording.
      return 'Send Authorization: Bearer <svc_live_… API key>; POST /v1/register makes one without an account.';
    case 'log_in':
      return 'Log in with POST /v1/auth/login/request, then POST /v1/auth/login/verify.';
    case 'verify_email':
      return 'Verify an email for this org with POST /v1/auth/email, then POST /v1/auth/verify-email.';
    case 'ask_org_admin':
      return 'Ask an owner or admin of this organization.';
    case 'get_key':
      // A revoked key is refused by POST /v1/keys too: a person makes one signed in, an agent registers anew.
      return 'Send a working API key: make one with POST /v1/keys signed in, or with POST /v1/register (no account needed).';
    case 'buy_credits':
      return 'Buy credits with POST /v1/billing/checkout (a person pays on the page it returns).';
    case 'add_card':
      return 'Add a card with POST /v1/billing/setup (a person completes it on the page it returns).';
    case 'raise_cap':
      return `A session or an uncapped key raises this key's ${CAP_FIELD[next.cap]} with PATCH /v1/keys/{id}.`;
    case 'accept_terms':
      return `An org owner or admin accepts the terms with a session: POST /v1/apis/${next.slug}/terms/accept.`;
    case 'check_price':
      return `Read the current price with GET /v1/apis/${next.slug}/schema, then retry with a higher maximum.`;
    case 'find_listing':
      return 'Find the listing with GET /v1/catalog/search.';
    case 'list_endpoints':
      return `List the endpoints with GET /v1/apis/${next.slug}/schema.`;
    case 'retry_later':
      return 'Retry after the Retry-After delay.';
    default:
      return assertNever(next);
  }
}

/** The web wording: a page a person opens (a real page of the web surface, not a REST route), and its link text. */
export function webNextStep(next: NextStep): { href: string | null; label: string } {
  switch (next.action) {
    case 'authenticate':
    case 'log_in':
      return { href: '/login', label: 'Sign in' };
    case 'verify_email':
      return { href: '/login', label: 'Sign in with your email (that verifies it)' };
    case 'ask_org_admin':
      return {
        href: '/dashboard',
        label: 'Ask an owner or admin of your organization (your role is on the dashboard)',
      };
    case 'get_key':
      return { href: '/dashboard/keys', label: 'Create a new key' };
    case 'buy_credits':
      return { href: '/dashboard/billing', label: 'Buy credits' };
    case 'add_card':
      return { href: '/dashboard/billing', label: 'Add a card' };
    case 'raise_cap':
      return { href: '/dashboard/keys', label: "Raise the key's cap" };
    case 'accept_terms':
      return { href: `/apis/${encodeURIComponent(next.slug)}#terms`, label: 'Read and accept the terms' };
    case 'check_price':
      return { href: `/apis/${encodeURIComponent(next.slug)}`, label: 'See the current prices' };
    case 'find_listing':
      return { href: '/catalog', label: 'Search the catalog' };
    case 'list_endpoints':
      return { href: `/apis/${encodeURIComponent(next.slug)}`, label: 'See the endpoints' };
    case 'retry_later':
      return { href: null, label: 'Wait a moment, then try again' };
    default:
      return assertNever(next);
  }
}
