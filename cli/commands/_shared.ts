/** Flag groups several commands share, and the body they turn into. */
import { APPROVAL_MODES } from '../../core/enumerations.js';
import { centsFlag, valueFlag } from '../args.js';

export const budgetArgs = {
  budget: valueFlag('cents|none', "Lifetime spend cap in cents ('none' clears it)"),
  'per-call-max': valueFlag('cents|none', "Refuse any single call above this many cents ('none' clears)"),
  'daily-cap': valueFlag('cents|none', "Spend cap per UTC day in cents ('none' clears)"),
  'approval-mode': {
    type: 'enum' as const,
    options: [...APPROVAL_MODES],
    description: 'auto, or free_only (free endpoints only)',
  },
};

export interface BudgetFlags {
  readonly budget?: string | undefined;
  readonly 'per-call-max'?: string | undefined;
  readonly 'daily-cap'?: string | undefined;
  readonly 'approval-mode'?: string | undefined;
}

export function budgetBody(args: BudgetFlags): Record<string, number | string | null> {
  const body: Record<string, number | string | null> = {};
  const caps = [
    ['budget', 'budget_cents'],
    ['per-call-max', 'per_call_max_cents'],
    ['daily-cap', 'daily_cap_cents'],
  ] as const;
  for (const [flag, field] of caps) {
    const v = centsFlag(flag, args[flag]);
    if (v !== undefined) body[field] = v;
  }
  if (args['approval-mode']) body.approval_mode = args['approval-mode'];
  return body;
}

export const KEY_COLUMNS = ['id', 'name', 'start', 'budget_cents', 'spent_cents', 'daily_cap_cents', 'revoked_at'];

/** Volume discounts as a person reads them: `10% off after 1000 calls`. */
export function discountsText(tiers: readonly { min_calls: number; percent_off: number }[]): string {
  return tiers.map((t) => `${t.percent_off}% off after ${t.min_calls} calls`).join(', ') || '-';
}

interface EndpointRow {
  endpoint_id: string;
  method: string;
  path: string;
  price_cents: number;
  discounts: readonly { min_calls: number; percent_off: number }[];
  pending_price: { new_price_cents: number; effective_at: string } | null;
  removed?: boolean;
}

/** The endpoints of a provider's listing as table rows: price, discounts, a pending increase, removed or not. */
export function endpointRows(endpoints: readonly EndpointRow[]): Record<string, unknown>[] {
  return endpoints.map((e) => ({
    endpoint_id: e.endpoint_id,
    method: e.method,
    path: e.path,
    price_cents: e.price_cents,
    discounts: discountsText(e.discounts),
    pending_price_cents: e.pending_price?.new_price_cents ?? null,
    pending_from: e.pending_price?.effective_at ?? null,
    removed: e.removed ?? false,
  }));
}
