/** `svc completion bash|zsh|fish`: a completion script for commands, flags, boards and clients. */
import { svcCommand } from '../command.js';
import { completionScript, commandTree } from '../completion.js';
import { usageError } from '../failure.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;

export default svcCommand({
  meta: { name: 'completion', description: 'Print a shell completion script (bash, zsh, fish)' },
  args: { shell: { type: 'positional', description: 'bash | zsh | fish' } },
  examples: [
    'svc completion bash >> ~/.bashrc',
    'svc completion zsh > "${fpath[1]}/_svc"',
    'svc completion fish > ~/.config/fish/completions/svc.fish',
  ],
  async run({ args }) {
    const shell = SHELLS.find((s) => s === args.shell);
    if (!shell) throw usageError('shell must be bash, zsh or fish');
    const { root } = await import('./index.js');
    const script = completionScript(shell, await commandTree(root));
    return { data: { shell, script }, human: script };
  },
});
