/**
 * The runner: takes `--json` and `--help` from anywhere on the line, walks the lazy subCommands to the one command
 * named, parses its flags strictly, runs it and maps the outcome to an exit code: 0 ok, 1 API failure, 2 usage,
 * 130 cancelled at a prompt. `svc help [command…]` is `svc [command…] --help`; an unknown command or flag is
 * answered with the closest name.
 */
import { closest, parseStrict } from './args.js';
import type { AnyCommand } from './command.js';
import { CliFailure, usageError } from './failure.js';
import { emitFailure, emitResult, setJsonMode, stripAnsi, useColor } from './output.js';

export async function run(argv: string[]): Promise<number> {
  const dashdash = argv.indexOf('--');
  const flags = dashdash === -1 ? argv : argv.slice(0, dashdash);
  const tail = dashdash === -1 ? [] : argv.slice(dashdash);
  const json = flags.includes('--json');
  let help = flags.includes('--help') || flags.includes('-h');
  const rest = [...flags.filter((a) => a !== '--json' && a !== '--help' && a !== '-h'), ...tail];
  if (rest[0] === 'help') {
    rest.shift();
    help = true;
  }
  setJsonMode(json);
  const path = ['svc'];
  let cmd: AnyCommand | undefined;
  try {
    let cur: AnyCommand = (await import('./commands/index.js')).root;
    cmd = cur;
    for (let name = rest[0]; cur.subCommands && name !== undefined && !name.startsWith('-'); name = rest[0]) {
      const load = cur.subCommands[name];
      if (!load) {
        const guess = closest(name, Object.keys(cur.subCommands));
        throw usageError(
          `unknown command '${[...path, name].join(' ')}'${guess ? `; did you mean '${[...path, guess].join(' ')}'?` : ''}`,
          `${path.join(' ')} --help`,
        );
      }
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
export async function usage(cmd: AnyCommand, path: string[]): Promise<string> {
  const { renderUsage } = await import('citty');
  const def = {
    meta: { ...cmd.meta, name: path.join(' ') },
    args: { ...(cmd.args ?? {}), json: { type: 'boolean', description: 'One JSON document on stdout' } },
    ...(cmd.subCommands ? { subCommands: cmd.subCommands } : {}),
  };
  let text = await renderUsage(def as Parameters<typeof renderUsage>[0]);
  if (cmd.examples?.length) text += `\n\nEXAMPLES\n\n${cmd.examples.map((e) => `  ${e}`).join('\n')}`;
  return useColor() ? text : stripAnsi(text);
}
