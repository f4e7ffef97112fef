/**
 * The shape of one `svc` command: citty's CommandDef (meta, args, lazy subCommands) plus what the strict runner
 * needs: which flags repeat, whether extra positionals are allowed, and one example per command for `--help`.
 * `run` receives its flags typed from the definition (`Args<A, M>`): a required positional or flag, or one with a
 * default, is a `string`; a boolean is a `boolean` (false when absent); an enum is the union of its options; a
 * flag listed in `multiple` is a `string[]`. The strict parser (args.ts) guarantees those types at run time.
 */
import type { ArgDef, ArgsDef, CommandDef } from 'citty';
import type { CommandResult } from './output.js';

/** What the strict parser hands back before it is narrowed to a command's own `Args`. */
export type ParsedArgs = Record<string, string | boolean | string[] | undefined> & { _: string[] };

type Present<D> = D extends { type: 'boolean' }
  ? true
  : D extends { default: string | boolean }
    ? true
    : D extends { type: 'positional' }
      ? D extends { required: false }
        ? false
        : true
      : D extends { required: true }
        ? true
        : false;
type Value<D> = D extends { type: 'boolean' }
  ? boolean
  : D extends { type: 'enum'; options: readonly (infer O)[] }
    ? O
    : string;
type One<D> = Present<D> extends true ? Value<D> : Value<D> | undefined;

/** The flags of a command as its `run` sees them. */
export type Args<A extends ArgsDef, M extends string = never> = { _: string[] } & {
  readonly [K in keyof A]: K extends M ? string[] : One<A[K]>;
};

export interface SvcCommand<A extends ArgsDef = ArgsDef, M extends keyof A & string = never>
  extends Omit<CommandDef<A>, 'run' | 'subCommands'> {
  meta: { name: string; description: string };
  args?: A;
  /** Flags that may repeat (`--query a=1 --query b=2`); their value is a string[]. */
  multiple?: readonly M[];
  examples?: readonly string[];
  subCommands?: Record<string, () => Promise<AnyCommand>>;
  run?: (ctx: { args: Args<A, M>; path: string[] }) => Promise<CommandResult>;
}

/** A command of any flags, as the runner and the completion walker hold them. */
export interface AnyCommand {
  meta: { name: string; description: string };
  args?: ArgsDef;
  multiple?: readonly string[];
  examples?: readonly string[];
  subCommands?: Record<string, () => Promise<AnyCommand>>;
  run?: (ctx: { args: ParsedArgs; path: string[] }) => Promise<CommandResult>;
}

/**
 * Declares a command; the returned value is the runner's view of it. The cast is the one place where the parsed
 * flags meet their type: parseStrict (args.ts) checks every rule `Args<A, M>` states, before `run` is called.
 */
export function svcCommand<const A extends ArgsDef = Record<never, ArgDef>, const M extends keyof A & string = never>(
  def: SvcCommand<A, M>,
): AnyCommand {
  return def as AnyCommand;
}

/** `import('./x.js')` of a module whose default export is a command, for lazy subCommands maps. */
export const lazy = (load: () => Promise<{ default: AnyCommand }>) => async (): Promise<AnyCommand> =>
  (await load()).default;

/** For commands not yet typed through `Args` (connect, owned elsewhere): a string flag or undefined. */
export function str(args: { readonly [name: string]: unknown }, name: string): string | undefined {
  const v = args[name];
  return typeof v === 'string' ? v : undefined;
}

/** For commands not yet typed through `Args` (connect): a repeatable flag's values. */
export function list(args: { readonly [name: string]: unknown }, name: string): string[] {
  const v = args[name];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [];
}
