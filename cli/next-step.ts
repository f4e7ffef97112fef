/**
 * Maps a server refusal (its `next` step when the server sends one, else its stable `code`) to the command that
 * resolves it. The CLI words the next step as a command, as the REST surface words it as a path.
 */
import { assertNever, NextStepSchema, type NextStep } from '../core/next-step.js';

export interface NextHint {
  slug?: string;
  apiId?: string;
  email?: string;
  /** The command line that was refused (`svc call …`): what retry_later runs again. */
  command?: string;
}

const CAP_FLAG = {
  budget: '--budget',
  per_call: '--per-call-max',
  daily: '--daily-cap',
  approval_mode: '--approval-mode',
} as const;

/** Every action the server can send (core/next-step.ts), worded as a command: one exhaustive switch. */
export function cliNextStep(next: NextStep, h: NextHint = {}): string {
  switch (next.action) {
    case 'authenticate':
      return 'svc login   (or `svc register` for an anonymous agent key)';
    case 'log_in':
      return h.email ? `svc login --email ${h.email}` : 'svc login';
    case 'verify_email':
      return `svc verify --email ${h.email ?? '<your email>'}   (then svc verify --token <token from the mail>)`;
    case 'ask_org_admin':
      return 'svc whoami   (shows your role; an org owner or admin must run this)';
    case 'get_key':
      return 'svc login   (then `svc keys create` for a new key)';
    case 'buy_credits':
      return 'svc billing checkout --pack starter';
    case 'add_card':
      return 'svc billing setup';
    case 'raise_cap':
      return `svc budget set ${CAP_FLAG[next.cap]} <value>   (signed in with svc login: a capped key cannot raise itself)`;
    case 'accept_terms':
      return `svc terms accept ${next.slug}`;
    case 'check_price':
      return `svc inspect ${next.slug} --schema`;
    case 'find_listing':
      return 'svc search <query>';
    case 'list_endpoints':
      return `svc inspect ${next.slug} --endpoints`;
    case 'retry_later':
      return h.command ?? 'svc whoami   (then run the same command again after the delay)';
    default:
      return assertNever(next);
  }
}

/** Failures the server sends no step for (and the CLI's own, like connection_failed): worded by their code. */
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

/**
 * The command for a refusal: the server's `next` step when it sent one (parsed with the shared schema; the CLI never
 * replaces it with a guess), else the code's own command.
 */
export function nextCommand(code: string, next: unknown, hint: NextHint = {}): string | null {
  const parsed = NextStepSchema.safeParse(next);
  if (parsed.success) return cliNextStep(parsed.data, hint);
  const byCode = BY_CODE[code];
  return byCode ? byCode(hint) : null;
}
