/**
 * Maps a server refusal (its stable `code`, or a `next.action` when the server sends one) to the command that
 * resolves it. The CLI words the next step as a command, as the REST surface words it as a path.
 */
import type { NextAction } from '../core/next-step.js';

export interface NextHint {
  slug?: string;
  apiId?: string;
  email?: string;
}

/** Every action the server can send (core/next-step.ts), worded as a command; null falls back to the code's. */
const BY_ACTION: Record<NextAction, ((h: NextHint) => string) | null> = {
  authenticate: () => 'svc login   (or `svc register` for an anonymous agent key)',
  log_in: (h) => (h.email ? `svc login --email ${h.email}` : 'svc login'),
  verify_email: (h) =>
    `svc verify --email ${h.email ?? '<your email>'}   (then svc verify --token <token from the mail>)`,
  ask_org_admin: () => 'svc whoami   (shows your role; an org owner or admin must run this)',
};

const BY_CODE: Record<string, (h: NextHint) => string> = {
  unauthorized: () => 'svc login   (or `svc register` for an anonymous agent key)',
  session_required: () => 'svc login',
  challenge_required: () => 'svc login   (signup needs the web page in production)',
  api_key_required: () => 'svc provision',
  key_revoked: () => 'svc login --key -   (paste a live key)',
  insufficient_credits: () => 'svc billing checkout --pack starter',
  budget_exceeded: () => 'svc budget set --budget <cents>',
  per_call_cap_exceeded: () => 'svc budget set --per-call-max <cents>',
  daily_cap_exceeded: () => 'svc budget set --daily-cap <cents>',
  price_above_max: () => 'svc call <slug> <endpoint> --quote',
  card_required: () => 'svc billing setup',
  insufficient_scope: () =>
    'svc login   (a session has every scope; or verify your email: svc verify --email <address>)',
  free_only_key: () => 'svc budget set --approval-mode auto',
  terms_not_accepted: (h) => `svc terms accept ${h.slug ?? '<slug>'}`,
  listing_not_found: () => 'svc search <query>',
  endpoint_not_found: (h) => `svc inspect ${h.slug ?? '<slug>'} --endpoints`,
  invalid_code: (h) => `svc login --email ${h.email ?? '<email>'}`,
  too_many_attempts: (h) => `svc login --email ${h.email ?? '<email>'}`,
  accept_terms_required: (h) => `svc provider publish ${h.apiId ?? '<id>'} --accept-terms`,
  verification_failed: (h) => `svc provider credentials ${h.apiId ?? '<id>'} --secret <secret>`,
  connection_failed: () => 'npm start   (or set SVC_API_URL / SVC_GATEWAY_URL)',
};

export function nextCommand(code: string, action: string | null, hint: NextHint = {}): string | null {
  const byAction = action && action in BY_ACTION ? BY_ACTION[action as NextAction] : null;
  if (byAction) return byAction(hint);
  const byCode = BY_CODE[code];
  return byCode ? byCode(hint) : null;
}
