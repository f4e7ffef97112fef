/**
 * Strict argument parsing on node:util's parseArgs: an unknown flag, a flag without its value, a missing required
 * argument or a stray positional is a usage error (exit 2) before any request is made — a typo must never run a
 * paid call. citty's own parser is lenient (it accepts unknown flags), so the runner validates with this first.
 */
import { parseArgs as utilParseArgs } from 'node:util';
import type { ArgsDef } from 'citty';
import type { ParsedArgs } from './command.js';
import { usageError } from './failure.js';

type UtilOptions = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

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
    const msg = (e as Error).message.split('\n')[0] ?? 'invalid arguments';
    throw usageError(msg.replace(/\. To specify a positional.*$/, ''));
  }
  const out: ParsedArgs = { _: [] };
  for (const [k, v] of Object.entries(parsed.values)) out[k] = v as string | boolean | string[];
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
    if (out[name] === undefined && a.default !== undefined) out[name] = a.default as string | boolean;
    if (a.required && out[name] === undefined) throw usageError(`missing required flag --${name}`);
    if (a.type === 'enum' && typeof out[name] === 'string' && !(a.options ?? []).includes(out[name] as string))
      throw usageError(`--${name} must be one of ${(a.options ?? []).join(', ')}`);
    if (typeof out[name] === 'string' && a.type !== 'boolean' && (out[name] as string).length === 0)
      throw usageError(`--${name} needs a value`);
  }
  return out;
}

/** `--budget 500`: a non-negative integer of cents, or `none` to clear the cap (null). */
export function centsFlag(name: string, v: string | undefined): number | null | undefined {
  if (v === undefined) return undefined;
  if (v === 'none') return null;
  if (!/^\d{1,9}$/.test(v)) throw usageError(`--${name} takes whole cents (e.g. 500 for $5.00) or 'none'`);
  return Number(v);
}
