/**
 * The one listing card (home page, catalog, provider pages): an avatar with the provider's initials, the name, the
 * summary, a category mark, the price range and what the numbers say. Every string is provider text: JSX escapes it.
 */
import type { ListingSummary } from '../../core/schemas/catalog.schemas.js';
import { formatCents } from '../../core/money.js';

/** Up to two letters from a name: "Acme Weather" -> "AW", "openmeteo" -> "OP". */
export function initialsOf(name: string): string {
  const words = name
    .replace(/[^\p{L}\p{N} ]+/gu, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  const letters = words.length >= 2 ? `${words[0]![0]}${words[1]![0]}` : (words[0] ?? '?').slice(0, 2);
  return letters.toUpperCase();
}

/** A stable hue (0-359) per category, so one category always has one colour mark. */
export function hueOf(text: string): number {
  let h = 0;
  for (const ch of text) h = (h * 31 + (ch.codePointAt(0) ?? 0)) % 360;
  return h;
}

export function priceText(min: number | null, max: number | null): string {
  if (min === null) return 'no endpoints';
  if (max === 0) return 'free';
  return min === max ? `${formatCents(min)} per call` : `${formatCents(min)}–${formatCents(max ?? min)} per call`;
}

/** One of 12 colour classes (`hue-0` … `hue-11`, style.ts) for a category or provider name. */
export const hueClass = (text: string) => `hue-${hueOf(text) % 12}`;

export function ListingCard(props: { l: ListingSummary }) {
  const l = props.l;
  const who = l.provider?.display_name ?? l.name;
  return (
    <li class="card listing">
      <div class="card-head">
        <span class={`avatar ${hueClass(who)}`} aria-hidden="true">
          {initialsOf(who)}
        </span>
        <div>
          <h3>
            <a href={`/apis/${encodeURIComponent(l.slug)}`}>{l.name}</a>
          </h3>
          {l.provider ? <p class="meta">by {l.provider.display_name}</p> : null}
        </div>
      </div>
      <p>{l.summary}</p>
      <p class="meta">
        <a class={`cat ${hueClass(l.category)}`} href={`/catalog?category=${encodeURIComponent(l.category)}`}>
          {l.category}
        </a>{' '}
        {priceText(l.min_price_cents, l.max_price_cents)} · {l.endpoint_count}{' '}
        {l.endpoint_count === 1 ? 'endpoint' : 'endpoints'}
        {l.calls_30d > 0 ? ` · ${l.calls_30d.toLocaleString('en-US')} calls (30 d)` : ' · no calls yet'}
        {l.success_rate_30d !== null ? ` · ${(l.success_rate_30d * 100).toFixed(1)}% ok` : ''}
      </p>
    </li>
  );
}
