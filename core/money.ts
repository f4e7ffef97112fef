/** Integer cents, the only money type. Never floats; see control/ledger/README.md. */

export type Cents = number & { readonly __brand: 'Cents' };

export function cents(n: number): Cents {
  if (!Number.isSafeInteger(n)) throw new RangeError(`cents must be a safe integer, got ${n}`);
  return n as Cents;
}

export const ZERO = 0 as Cents;

/** Format for humans only (emails, pages); never parse this back. */
export function formatCents(c: number): string {
  const sign = c < 0 ? '-' : '';
  const abs = Math.abs(c);
  return `${sign}$${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
