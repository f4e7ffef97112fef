/**
 * What the caller can do about an error, as data: a small closed set of actions that every surface renders in its
 * own words (a REST path on REST and the gateway, a tool on MCP, a command on the CLI, a link on a page).
 * Services attach one to an SvcError (`new SvcError(code, detail, { next })`); the problem body carries it as `next`.
 * Adding an action means adding it here, to every renderer (`restNextStep` below, the MCP and CLI ones) and to
 * docs/errors.md; TypeScript's exhaustive switches point at each place.
 */
import { z } from 'zod';

export const NextStepSchema = z.discriminatedUnion('action', [
  /** Send a credential: an API key (svc_live_…) or a session token (sess_…). */
  z.object({ action: z.literal('authenticate') }),
  /** A human session is needed: request a login code by email and exchange it for a session. */
  z.object({ action: z.literal('log_in') }),
  /** Verify an email address for the org: that adds the billing:write and provider:write scopes. */
  z.object({ action: z.literal('verify_email') }),
  /** Only an org owner or admin may do this: ask one. */
  z.object({ action: z.literal('ask_org_admin') }),
]);

export type NextStep = z.infer<typeof NextStepSchema>;
export type NextAction = NextStep['action'];

/** The REST wording (control plane and gateway), appended to the problem's `detail`. */
export function restNextStep(next: NextStep): string {
  switch (next.action) {
    case 'authenticate':
      return 'Send Authorization: Bearer <svc_live_… key or sess_… token>.';
    case 'log_in':
      return 'Log in with POST /v1/auth/login/request, then POST /v1/auth/login/verify.';
    case 'verify_email':
      return 'Verify an email for this org with POST /v1/auth/email, then POST /v1/auth/verify-email.';
    case 'ask_org_admin':
      return 'Ask an owner or admin of this organization.';
  }
}
