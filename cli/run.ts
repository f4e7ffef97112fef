/**
 * The runner: takes `--json` and `--help` from anywhere on the line, walks the lazy subCommands to the one command
 * named, parses its flags strictly, runs it and maps the outcome to an exit code: 0 ok, 1 API failure, 2 usage,
 * 130 cancelled at a prompt.
 */
import { parseStrict } from './args.js';
import type { SvcCommand } from './command.js';
import { CliFailure, usageError } from './failure.js';
import { emitFailure, emitResult, setJsonMode, stripAnsi, useColor } from './output.js';

export async function run(argv: string[]): Promise<number> {
  const dashdash = argv.indexOf('--');
  const flags = dashdash === -1 ? argv : argv.slice(0, dashdash);
  const tail = dashdash === -1 ? [] : argv.slice(dashdash);
  const json = flags.includes('--json');
  const help = flags.includes('--help') || flags.includes('-h');
  const rest = [...flags.filter((a) => a !== '--json' && a !== '--help' && a !== '-h'), ...tail];
  setJsonMode(json);
  const path = ['svc'];
  let cmd: SvcCommand<any> | undefined;
  try {
    let cur: SvcCommand<any> = (await import('./commands/index.js')).root;
    cmd = cur;
    while (cur.subCommands && rest.length > 0 && !rest[0]!.startsWith('-')) {
      const name = rest[0]!;
      const load = cur.subCommands[name];
      if (!load) throw usageError(`unknown command '${[...path, name].join(' ')}'`, `${path.join(' ')} --help`);
      cur = await load();
      cmd = cur;
      path.push(name);
      rest.shift();
    }
    if (help) {
      process.stdout.write(`${await usage(cur, path)}\n`);
      return 0;
    }
    if (!cur.run) {
      throw usageError(
        `'${path.join(' ')}' needs a subcommand: ${Object.keys(cur.subCommands ?? {}).join(', ')}`,
        `${path.join(' ')} --help`,
      );
    }
    const args = parseStrict(rest, cur.args ?? {}, cur.multiple ?? []);
    await emitResult(await cur.run({ args, path }));
    return 0;
  } catch (e) {
    const f =
      e instanceof CliFailure ? e : new CliFailure('api', 'internal', e instanceof Error ? e.message : String(e));
    emitFailure(f);
    if (f.kind === 'usage' && !json && cmd && !f.next) process.stderr.write(`usage: ${path.join(' ')} --help\n`);
    return f.kind === 'usage' ? 2 : f.kind === 'cancelled' ? 130 : 1;
  }
}

/** citty's usage text with the full command path and an EXAMPLES block; plain when colors are off. */
export async function usage(cmd: SvcCommand<any>, path: string[]): Promise<string> {
  const { renderUsage } = await import('citty');
  const subs: Record<string, () => Promise<SvcCommand<any>>> = cmd.subCommands ?? {};
  const def = {
    meta: { ...cmd.meta, name: path.join(' ') },
    args: { ...(cmd.args ?? {}), json: { type: 'boolean', description: 'One JSON document on stdout' } },
    ...(cmd.subCommands ? { subCommands: subs } : {}),
  };
  let text = await renderUsage(def as Parameters<typeof renderUsage>[0]);
  if (cmd.examples?.length) text += `\n\nEXAMPLES\n\n${cmd.examples.map((e) => `  ${e}`).join('\n')}`;
  return useColor() ? text : stripAnsi(text);
}
