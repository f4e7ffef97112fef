/** Small display formats shared by pages. */
import { formatCents } from '../../core/money.js';

/** "$0.09 from 2026-12-01" for a scheduled price increase, "—" when none. */
export function pendingPriceText(p: { new_price_cents: number; effective_at: string | null } | null): string {
  return p ? `${formatCents(p.new_price_cents)} from ${String(p.effective_at).slice(0, 10)}` : '—';
}

/** "2026-11-27 08:03 UTC" for a stored ISO time; "never" for null. Pages show UTC, as the usage days are UTC. */
export function shortTime(iso: string | null | undefined, none = 'never'): string {
  if (!iso) return none;
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}
