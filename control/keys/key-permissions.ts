/**
 * Who may do what to which key (docs/identity.md, "Key permissions"). A session or an unconstrained key manages every
 * key of its org; a constrained key (any cap set, or `free_only`) manages only itself and the keys it created, may
 * only lower caps, and hands out allowance it gives up itself. Pure functions: keys.service.ts applies them.
 */
import type { ApprovalMode, Row } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';
import type { Principal } from '../auth/principal.js';
import type { KeyCaps } from '../../core/schemas/keys.schemas.js';

type CapRow = Pick<
  Row<'api_keys'>,
  'budget_cents' | 'per_call_max_cents' | 'daily_cap_cents' | 'approval_mode' | 'rate_limit_per_min' | 'spent_cents'
>;

/** A key with any spend cap, rate limit or `free_only` is constrained; sessions never are. */
export function isConstrained(key: CapRow): boolean {
  return (
    key.budget_cents !== null ||
    key.per_call_max_cents !== null ||
    key.daily_cap_cents !== null ||
    key.rate_limit_per_min !== null ||
    key.approval_mode === 'free_only'
  );
}

const NUMERIC_CAPS = ['budget_cents', 'per_call_max_cents', 'daily_cap_cents', 'rate_limit_per_min'] as const;
type NumericCap = (typeof NUMERIC_CAPS)[number];

function escalation(detail: string, field: string): SvcError {
  return new SvcError('cap_escalation', detail, { extra: { field } });
}

/** null means "no cap", so it is the highest value a cap can take. */
function isRaise(from: number | null, to: number | null): boolean {
  if (from === null) return false;
  return to === null || to > from;
}

function modeRank(m: ApprovalMode): number {
  return m === 'free_only' ? 0 : 1;
}

/** A constrained key may only lower caps (on itself or a key it created); raising needs a session or an unconstrained key. */
export function assertNoRaise(target: CapRow, patch: KeyCaps): void {
  for (const f of NUMERIC_CAPS) {
    const to = patch[f];
    if (to !== undefined && isRaise(target[f], to)) {
      throw escalation(
        `A capped key cannot raise or clear ${f} (now ${target[f]}): use a session or an uncapped key`,
        f,
      );
    }
  }
  if (patch.approval_mode !== undefined && modeRank(patch.approval_mode) > modeRank(target.approval_mode)) {
    throw escalation(
      'A capped key cannot switch a free_only key to auto: use a session or an uncapped key',
      'approval_mode',
    );
  }
}

/**
 * Caps of a key created by a constrained key: never more than the creator's own. Budget and daily cap are additive
 * across keys, so they must be set and are carved out of the creator's (the returned `carve`); the per-call cap, the
 * rate limit and `free_only` are inherited when omitted.
 */
export function childCaps(creator: CapRow, input: KeyCaps): { caps: Required<KeyCaps>; carve: KeyCaps } {
  const remaining = creator.budget_cents === null ? null : creator.budget_cents - creator.spent_cents;
  const caps: Required<KeyCaps> = {
    budget_cents: _bounded('budget_cents', input.budget_cents, remaining, true),
    daily_cap_cents: _bounded('daily_cap_cents', input.daily_cap_cents, creator.daily_cap_cents, true),
    per_call_max_cents: _bounded('per_call_max_cents', input.per_call_max_cents, creator.per_call_max_cents, false),
    rate_limit_per_min: _bounded('rate_limit_per_min', input.rate_limit_per_min, creator.rate_limit_per_min, false),
    approval_mode: input.approval_mode ?? creator.approval_mode,
  };
  if (modeRank(caps.approval_mode) > modeRank(creator.approval_mode)) {
    throw escalation('A free_only key can only create free_only keys', 'approval_mode');
  }
  const carve: KeyCaps = {};
  if (creator.budget_cents !== null) carve.budget_cents = creator.budget_cents - caps.budget_cents!;
  if (creator.daily_cap_cents !== null) carve.daily_cap_cents = creator.daily_cap_cents - caps.daily_cap_cents!;
  return { caps, carve };
}

function _bounded(
  field: NumericCap,
  asked: number | null | undefined,
  limit: number | null,
  mustState: boolean,
): number | null {
  if (limit === null) return asked ?? null;
  if (asked === undefined && !mustState) return limit;
  if (asked === undefined || asked === null || asked > limit) {
    throw escalation(
      `A capped key can only create keys with ${field} set to at most ${Math.max(0, limit)}` +
        (mustState ? ' (it is taken from its own)' : ''),
      field,
    );
  }
  return asked;
}

/** Which keys a principal may change or revoke: a constrained key only itself and the keys it created. */
export function assertMayManage(
  principal: Principal,
  principalKey: CapRow | undefined,
  target: Pick<Row<'api_keys'>, 'id' | 'created_by_key_id'>,
): void {
  if (principal.kind === 'session' || !principalKey || !isConstrained(principalKey)) return;
  if (target.id === principal.keyId || target.created_by_key_id === principal.keyId) return;
  throw new SvcError('forbidden', 'A capped key may manage only itself and the keys it created', {
    extra: { key_id: target.id },
  });
}
