/**
 * Strict argument parsing on node:util's parseArgs: an unknown flag, a flag without its value, a missing required
 * argument, a stray positional or a value of the wrong kind is a usage error (exit 2) before any request is made —
 * a typo must never run a paid call. citty's own parser is lenient (it accepts unknown flags), so the runner
 * validates with this first. A string flag's `valueHint` names its kind (`VALUE_KINDS`), shown in `--help` too.
 */
import { parseArgs as utilParseArgs } from 'node:util';
import type { ArgsDef } from 'citty';
import type { ParsedArgs } from './command.js';
import { usageError } from './failure.js';

type UtilOptions = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

/** The kinds a string flag's value is checked against, by its `valueHint`; the text ends "--flag takes …". */
export const VALUE_KINDS = {
  integer: { test: (v: string) => /^\d{1,9}$/.test(v), takes: 'a whole number, e.g. 10' },
  cents: { test: (v: string) => /^\d{1,9}$/.test(v), takes: 'whole cents, e.g. 500 for $5.00' },
  'cents|none': {
    test: (v: string) => v === 'none' || /^\d{1,9}$/.test(v),
    takes: "whole cents (500 for $5.00) or 'none'",
  },
  date: {
    test: (v: string) =>
      /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/.test(v) &&
      !Number.isNaN(Date.parse(v)),
    takes: 'a date like 2026-11-01 or a date-time like 2026-11-01T09:00:00Z',
  },
} as const;
export type ValueKind = keyof typeof VALUE_KINDS;

/** A string flag whose value is checked before the request (`--limit abc` is refused with exit 2). */
export function valueFlag<K extends ValueKind>(kind: K, description: string) {
  return { type: 'string', valueHint: kind, description } as const;
}

/** The closest of `names` to `typed` (edit distance at most 2, or a prefix), for "did you mean". */
export function closest(typed: string, names: readonly string[]): string | null {
  let best: string | null = null;
  let bestD = 3;
  for (const n of names) {
    const d = n.startsWith(typed) && typed.length >= 2 ? 1 : distance(typed, n);
    if (d < bestD) {
      best = n;
      bestD = d;
    }
  }
  return best;
}

/** Levenshtein distance, one row at a time. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1] ? 0 : 1;
      next.push(Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + same));
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

export function parseStrict(argv: string[], def: ArgsDef, multiple: readonly string[] = []): ParsedArgs {
  const options: UtilOptions = {};
  const positionals: { name: string; required: boolean }[] = [];
  for (const [name, a] of Object.entries(def)) {
    if (a.type === 'positional') {
      positionals.push({ name, required: a.required !== false && a.default === undefined });
      continue;
    }
    const alias = 'alias' in a ? a.alias : undefined;
    const aliases: string[] = alias === undefined ? [] : Array.isArray(alias) ? alias : [alias];
    const short = aliases.find((x) => x.length === 1);
    options[name] = {
      type: a.type === 'boolean' ? 'boolean' : 'string',
      ...(multiple.includes(name) ? { multiple: true } : {}),
      ...(short ? { short } : {}),
    };
  }
  let parsed: ReturnType<typeof utilParseArgs>;
  try {
    parsed = utilParseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (e) {
    const msg = (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? 'invalid arguments';
    const unknown = /^Unknown option '(--?[^']+)'/.exec(msg)?.[1];
    const guess = unknown?.startsWith('--') ? closest(unknown.slice(2), Object.keys(options)) : null;
    throw usageError(`${msg.replace(/\. To specify a positional.*$/, '')}${guess ? `; did you mean --${guess}?` : ''}`);
  }
  const out: ParsedArgs = { _: [] };
  for (const [k, v] of Object.entries(parsed.values)) {
    if (Array.isArray(v)) out[k] = v.filter((x): x is string => typeof x === 'string');
    else if (v !== undefined) out[k] = v;
  }
  const rest = [...parsed.positionals];
  for (const p of positionals) {
    const v = rest.shift();
    if (v === undefined) {
      const d = def[p.name]?.default;
      if (p.required) throw usageError(`missing argument <${p.name}>`);
      if (typeof d === 'string') out[p.name] = d;
    } else out[p.name] = v;
  }
  if (rest.length > 0) throw usageError(`unexpected argument '${rest[0]}'`);
  for (const [name, a] of Object.entries(def)) {
    if (a.type === 'positional') continue;
    const d = a.default;
    if (out[name] === undefined && (typeof d === 'string' || typeof d === 'boolean')) out[name] = d;
    if (a.type === 'boolean' && out[name] === undefined) out[name] = false;
    if (multiple.includes(name) && out[name] === undefined && !a.required) out[name] = [];
    if (a.required && out[name] === undefined) throw usageError(`missing required flag --${name}`);
    const values = ([] as unknown[]).concat(out[name] ?? []);
    for (const v of values) {
      if (typeof v !== 'string') continue;
      if (v.length === 0) throw usageError(`--${name} needs a value`);
      if (a.type === 'enum' && !(a.options ?? []).includes(v))
        throw usageError(`--${name} must be one of ${(a.options ?? []).join(', ')}`);
      const kind = a.valueHint && a.valueHint in VALUE_KINDS ? VALUE_KINDS[a.valueHint as ValueKind] : null;
      if (kind && !kind.test(v)) throw usageError(`--${name} takes ${kind.takes}; got '${v}'`);
    }
  }
  return out;
}

/** `--budget 500`: a non-negative integer of cents, or `none` to clear the cap (null). */
export function centsFlag(name: string, v: string | undefined): number | null | undefined {
  if (v === undefined) return undefined;
  if (v === 'none') return null;
  if (!VALUE_KINDS.cents.test(v)) throw usageError(`--${name} takes ${VALUE_KINDS['cents|none'].takes}`);
  return Number(v);
}
