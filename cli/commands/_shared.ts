/** Flag groups several commands share, and the body they turn into. */
import { APPROVAL_MODES } from '../../core/enumerations.js';
import { centsFlag } from '../args.js';
import { type ParsedArgs, str } from '../command.js';

export const budgetArgs = {
  budget: { type: 'string', description: "Lifetime spend cap in cents ('none' clears it)" },
  'per-call-max': { type: 'string', description: "Refuse any single call above this many cents ('none' clears)" },
  'daily-cap': { type: 'string', description: "Spend cap per UTC day in cents ('none' clears)" },
  'approval-mode': {
    type: 'enum',
    options: APPROVAL_MODES as unknown as string[],
    description: 'auto, or free_only (free endpoints only)',
  },
} as const;

export function budgetBody(args: ParsedArgs): Record<string, number | string | null> {
  const body: Record<string, number | string | null> = {};
  const caps = [
    ['budget', 'budget_cents'],
    ['per-call-max', 'per_call_max_cents'],
    ['daily-cap', 'daily_cap_cents'],
  ] as const;
  for (const [flag, field] of caps) {
    const v = centsFlag(flag, str(args, flag));
    if (v !== undefined) body[field] = v;
  }
  if (str(args, 'approval-mode')) body.approval_mode = str(args, 'approval-mode')!;
  return body;
}

export const KEY_COLUMNS = ['id', 'name', 'start', 'budget_cents', 'spent_cents', 'daily_cap_cents', 'revoked_at'];
