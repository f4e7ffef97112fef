/** Small display formats shared by pages. */
import { formatCents } from '../../core/money.js';

/** "$0.09 from 2026-12-01" for a scheduled price increase, "—" when none. */
export function pendingPriceText(p: { new_price_cents: number; effective_at: string | null } | null): string {
  return p ? `${formatCents(p.new_price_cents)} from ${String(p.effective_at).slice(0, 10)}` : '—';
}
