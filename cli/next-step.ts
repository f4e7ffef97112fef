/**
 * Maps a server refusal (its `next` step when the server sends one, else its stable `code`) to the one command that
 * resolves it, and rewords the server's `detail` for a person who typed a command: the REST wording of the next step
 * ("Send Authorization: Bearer …", "POST /v1/…") and header names are HTTP details they never typed.
 * Every `next` is a single command line: no prose, no backticks; `<…>` marks the one value to fill in when the CLI
 * cannot know it (docs/cli.md "Output and exit codes"). The server's step is used as sent, never replaced by a guess.
 */
// Type only: core/next-step.js loads zod, which `svc call` (the command agents run in loops) does not need; the
// shape check below is the schema's, by hand.
import type { NextAction, NextStep } from '../core/next-step.js';

export interface NextHint {
  slug?: string;
  endpoint?: string;
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

function assertNever(x: never): never {
  throw new Error(`unhandled next step ${JSON.stringify(x)}`);
}

/** Every action the server can send (core/next-step.ts), worded as one command: the switch is exhaustive. */
export function cliNextStep(next: NextStep, h: NextHint = {}): string {
  switch (next.action) {
    case 'authenticate':
      return 'svc login';
    case 'log_in':
      return h.email ? `svc login --email ${h.email}` : 'svc login';
    case 'verify_email':
      return `svc verify --email ${h.email ?? '<your email>'}`;
    case 'ask_org_admin':
      return 'svc whoami';
    case 'get_key':
      return 'svc login';
    case 'buy_credits':
      return 'svc billing checkout --pack starter';
    case 'add_card':
      return 'svc billing setup';
    case 'raise_cap':
      return `svc budget set ${CAP_FLAG[next.cap]} ${next.cap === 'approval_mode' ? 'auto' : '<cents>'}`;
    case 'accept_terms':
      return `svc terms accept ${next.slug}`;
    case 'check_price':
      return `svc call ${next.slug} ${h.endpoint ?? '<endpoint>'} --quote`;
    case 'find_listing':
      return 'svc search <query>';
    case 'list_endpoints':
      return `svc inspect ${next.slug} --endpoints`;
    case 'retry_later':
      return h.command ?? 'svc whoami';
    default:
      return assertNever(next);
  }
}

const ACTIONS: Record<NextAction, 'slug' | 'cap' | null> = {
  authenticate: null,
  log_in: null,
  verify_email: null,
  ask_org_admin: null,
  get_key: null,
  buy_credits: null,
  add_card: null,
  raise_cap: 'cap',
  accept_terms: 'slug',
  check_price: 'slug',
  find_listing: null,
  list_endpoints: 'slug',
  retry_later: null,
};
const CAPS: readonly string[] = Object.keys(CAP_FLAG);

/** NextStepSchema's check without loading zod: an object with a known action and the field that action carries. */
function asNextStep(next: unknown): NextStep | null {
  if (!next || typeof next !== 'object' || !('action' in next) || typeof next.action !== 'string') return null;
  if (!(next.action in ACTIONS)) return null;
  const field = ACTIONS[next.action as NextAction];
  if (field === 'slug' && !('slug' in next && typeof next.slug === 'string' && next.slug)) return null;
  if (field === 'cap' && !('cap' in next && typeof next.cap === 'string' && CAPS.includes(next.cap))) return null;
  return next as NextStep;
}

/** Failures the server sends no step for (and the CLI's own, like connection_failed): worded by their code. */
const BY_CODE: Record<string, (h: NextHint) => string> = {
  unauthorized: () => 'svc login',
  session_required: () => 'svc login',
  challenge_required: () => 'svc login',
  api_key_required: () => 'svc provision',
  key_revoked: () => 'svc login',
  insufficient_credits: () => 'svc billing checkout --pack starter',
  budget_exceeded: () => 'svc budget set --budget <cents>',
  per_call_cap_exceeded: () => 'svc budget set --per-call-max <cents>',
  daily_cap_exceeded: () => 'svc budget set --daily-cap <cents>',
  price_above_max: (h) => `svc call ${h.slug ?? '<slug>'} ${h.endpoint ?? '<endpoint>'} --quote`,
  card_required: () => 'svc billing setup',
  insufficient_scope: () => 'svc login',
  free_only_key: () => 'svc budget set --approval-mode auto',
  // A capped key may only lower caps: a person signs in (`svc budget set` then acts with the session).
  cap_escalation: () => 'svc login',
  terms_not_accepted: (h) => `svc terms accept ${h.slug ?? '<slug>'}`,
  listing_not_found: () => 'svc search <query>',
  endpoint_not_found: (h) => `svc inspect ${h.slug ?? '<slug>'} --endpoints`,
  invalid_code: (h) => `svc login --email ${h.email ?? '<email>'}`,
  too_many_attempts: (h) => `svc login --email ${h.email ?? '<email>'}`,
  accept_terms_required: (h) => `svc provider publish ${h.apiId ?? '<id>'} --accept-terms`,
  verification_failed: (h) => `svc provider credentials ${h.apiId ?? '<id>'} --secret -`,
  connection_failed: () => 'npm start',
};

/** The command for a refusal: the server's `next` step when it sent a valid one, else the code's own command. */
export function nextCommand(code: string, next: unknown, hint: NextHint = {}): string | null {
  const step = asNextStep(next);
  if (step) return cliNextStep(step, hint);
  const byCode = BY_CODE[code];
  return byCode ? byCode(hint) : null;
}
/** Header names a person sets with a flag of `svc call`. */
const HEADER_FLAGS: [RegExp, string][] = [
  [/X-Svc-Max-Price-Cents/gi, '--max-price'],
  [/Idempotency-Key/g, '--idempotency-key'],
];
const HTTP_DETAIL = /\/v1\/|\b(?:GET|POST|PUT|PATCH|DELETE) \/|Authorization|Bearer|X-Svc-Key/;

/**
 * The server's `detail` as a person who typed a command reads it: without the REST wording of the next step (the
 * CLI prints its own `next`), without sentences or parentheses that name routes or headers, header names as the
 * flags that set them. Empty when nothing is left (the caller then uses the problem's title).
 */
export function forPeople(detail: string | null): string {
  if (!detail) return '';
  // The REST wording of a next step (core/next-step.ts restNextStep, appended to detail) names a header or a
  // route in every action but ask_org_admin, whose words suit a person too: the sentence filter below drops it.
  let s = detail;
  // Parentheses and "; see …" tails that name a route or a header.
  s = s.replace(/\s*\(([^()]*)\)/g, (m, inner: string) => (HTTP_DETAIL.test(inner) ? '' : m));
  s = s.replace(/[;,:]\s*(?:see|with|use)\s+(?:GET|POST|PUT|PATCH|DELETE)\s+\S+/g, '');
  // Whole sentences about HTTP details.
  s = s
    .split(/(?<=\.)\s+/)
    .filter((sentence) => !HTTP_DETAIL.test(sentence))
    .join(' ');
  for (const [re, flag] of HEADER_FLAGS) s = s.replace(re, flag);
  return s.replace(/\s+([.,;:])/g, '$1').trim();
}
