/**
 * `svc completion bash|zsh|fish`: each script is loaded into its real shell and asked for completions the way a
 * person's TAB would ask: bash through its completion function, zsh through compinit in a terminal (tmux), fish
 * through its own completion engine (`complete -C`). No stack is needed: the scripts are static.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, tempHome } from '../../helpers/cli.js';
import { openTerminal } from '../../helpers/terminal.js';

const exec = promisify(execFile);
const home = tempHome();
const scripts: Record<'bash' | 'zsh' | 'fish', string> = { bash: '', zsh: '', fish: '' };

beforeAll(async () => {
  for (const shell of ['bash', 'zsh', 'fish'] as const) {
    const r = await runSvc(['completion', shell], { home: home.home });
    expect(r.code).toBe(0);
    scripts[shell] = join(home.home, `svc.${shell}`);
    writeFileSync(scripts[shell], r.stdout);
  }
});
afterAll(() => home.cleanup());

/** What each case types, and what its completions must hold: subcommands, board names, client ids, flags. */
const CASES: { line: string; want: string[]; not?: string[] }[] = [
  { line: 'svc provider pu', want: ['publish'] },
  { line: 'svc leaderboard most_', want: ['most_reliable', 'most_used'] },
  { line: 'svc connect --client claude-', want: ['claude-code', 'claude-desktop'] },
  { line: 'svc keys create --', want: ['--daily-cap', '--per-call-max', '--scopes', '--json'], not: ['--pack'] },
];

describe('svc completion', () => {
  it('bash: the completion function offers subcommands, boards, client ids and flags', async () => {
    for (const c of CASES) {
      const words = c.line.split(' ');
      const { stdout } = await exec('bash', [
        '-c',
        `source ${scripts.bash}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _svc; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ]);
      const got = stdout.trim().split('\n');
      for (const w of c.want) expect(got, c.line).toContain(w);
      for (const w of c.not ?? []) expect(got, c.line).not.toContain(w);
    }
  });

  it("fish: fish's own completion engine offers the same candidates", async () => {
    for (const c of CASES) {
      const { stdout } = await exec('fish', ['--no-config', '-c', `source ${scripts.fish}; complete -C '${c.line}'`]);
      const got = stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]);
      for (const w of c.want) expect(got, c.line).toContain(w);
      for (const w of c.not ?? []) expect(got, c.line).not.toContain(w);
    }
  });

  it('zsh: TAB in an interactive zsh (compinit, driven through tmux) completes and lists candidates', async () => {
    const term = await openTerminal(`env -i HOME=${home.home} TERM=xterm PATH=/usr/bin:/bin zsh -f`, {
      columns: 200,
      rows: 50,
    });
    try {
      await term.keys(`autoload -U compinit && compinit -u && source ${scripts.zsh} && print READY`, 'Enter');
      await term.waitFor('READY');
      // A unique prefix is completed in place on the command line.
      await term.keys('svc provider pu', 'Tab');
      await term.waitFor('svc provider publish');
      // An ambiguous one lists the candidates under the prompt.
      await term.keys('C-u', 'clear', 'Enter');
      await term.keys('svc connect --client claude-', 'Tab');
      await term.waitFor(/claude-code\s+claude-desktop/);
    } finally {
      await term.close();
    }
  });

  it('zsh: saved as _svc in a $fpath folder, compinit picks it up by its #compdef line (issue 24)', async () => {
    const dir = join(home.home, 'zfunc');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '_svc'), readFileSync(scripts.zsh));
    const term = await openTerminal(`env -i HOME=${home.home} TERM=xterm PATH=/usr/bin:/bin zsh -f`, {
      columns: 200,
      rows: 50,
    });
    try {
      // No `source`: only the file in $fpath, as `svc completion zsh > "${fpath[1]}/_svc"` leaves it.
      await term.keys(
        `fpath=(${dir} $fpath); autoload -U compinit && compinit -u -d ${dir}/.zcompdump && print READY`,
        'Enter',
      );
      await term.waitFor('READY');
      await term.keys('svc provider pu', 'Tab');
      await term.waitFor('svc provider publish');
      await term.keys('C-u', 'clear', 'Enter');
      await term.keys('svc leaderboard most_', 'Tab');
      await term.waitFor(/most_reliable\s+most_used/);
    } finally {
      await term.close();
    }
  });
});
