/**
 * The shape of one `svc` command: citty's CommandDef (meta, args, lazy subCommands) plus what the strict runner
 * needs: which flags repeat, whether extra positionals are allowed, and one example per command for `--help`.
 */
import type { ArgsDef, CommandDef } from 'citty';
import type { CommandResult } from './output.js';

export type ParsedArgs = Record<string, string | boolean | string[] | undefined> & { _: string[] };

export interface SvcCommand<A extends ArgsDef = ArgsDef> extends Omit<CommandDef<A>, 'run' | 'subCommands'> {
  meta: { name: string; description: string };
  args?: A;
  /** Flags that may repeat (`--query a=1 --query b=2`); their value is a string[]. */
  multiple?: readonly (keyof A & string)[];
  examples?: readonly string[];
  subCommands?: Record<string, () => Promise<SvcCommand<any>>>;
  run?: (ctx: { args: ParsedArgs; path: string[] }) => Promise<CommandResult>;
}

export function svcCommand<const A extends ArgsDef>(def: SvcCommand<A>): SvcCommand<A> {
  return def;
}

/** `import('./x.js')` of a module whose default export is a command, for lazy subCommands maps. */
export const lazy = (load: () => Promise<{ default: SvcCommand<any> }>) => async (): Promise<SvcCommand<any>> =>
  (await load()).default;

export function str(args: ParsedArgs, name: string): string | undefined {
  const v = args[name];
  return typeof v === 'string' ? v : undefined;
}

export function list(args: ParsedArgs, name: string): string[] {
  const v = args[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}
