/**
 * `svc connect`: writes the svc MCP server into agent clients' configuration (nine kinds, see connect/clients.ts),
 * merging with what is there. By default the key is referenced through the client's environment-variable
 * mechanism; `--key` embeds it (with a warning), `--no-key` writes a keyless development entry.
 */
import { join } from 'node:path';
import { config } from '../client.js';
import { str, svcCommand } from '../command.js';
import { type FileChange, changed, planClient, readMaybe, writeChange } from '../connect/apply.js';
import { type Auth, CLIENT_IDS, CLIENTS, type ClientSpec, KEY_ENV, clientById } from '../connect/clients.js';
import { lineDiff } from '../connect/diff.js';
import { rulesSection, upsertBridge, upsertRules } from '../connect/rules.js';
import { usageError } from '../failure.js';
import { interactive, isJson, note } from '../output.js';

export default svcCommand({
  meta: { name: 'connect', description: 'Install the svc MCP server into agent clients (Claude, Cursor, VS Code, …)' },
  args: {
    pick: { type: 'boolean', description: 'Choose clients interactively' },
    all: { type: 'boolean', description: 'Every supported client' },
    client: { type: 'string', description: `One client: ${CLIENT_IDS.join(', ')}` },
    project: { type: 'boolean', description: 'Repository-scoped config in the current directory' },
    rules: { type: 'boolean', description: 'With --project: AGENTS.md section plus CLAUDE.md/GEMINI.md bridges' },
    'dry-run': { type: 'boolean', description: 'Print a diff, write nothing' },
    key: { type: 'string', description: 'Embed this API key in plaintext (prefer the SVC_API_KEY variable)' },
    'no-key': { type: 'boolean', description: 'Keyless development configuration' },
  },
  examples: [
    'svc connect --client cursor',
    'svc connect --all --dry-run',
    'svc connect --project --rules --client claude-code',
  ],
  async run({ args }) {
    const selected = await _select(args.pick === true, args.all === true, str(args, 'client'));
    if (args.rules && !args.project) throw usageError('--rules goes with --project');
    const key = str(args, 'key');
    if (key !== undefined && args['no-key']) throw usageError('use --key or --no-key, not both');
    if (key !== undefined)
      note(`warning: --key writes the key in plaintext; anyone who can read those files can spend your credits`);
    const url = config().mcpUrl;
    const root = process.cwd();
    const plans: FileChange[] = [];
    const skipped: { target: string; reason: string }[] = [];
    const warnings: string[] = [];
    for (const spec of selected) {
      const file = args.project ? spec.projectFile?.(root) : spec.userFile();
      if (!file) {
        skipped.push({ target: spec.id, reason: `${spec.label} has no repository-scoped configuration` });
        continue;
      }
      const auth = _auth(spec, key, args['no-key'] === true, warnings);
      plans.push(planClient(spec, file, url, auth));
    }
    if (args.rules) {
      const agents = join(root, 'AGENTS.md');
      const before = readMaybe(agents);
      plans.push({ target: 'agents-md', file: agents, before, after: upsertRules(before, rulesSection(url)) });
      for (const [name, agent] of [
        ['CLAUDE.md', 'Claude Code'],
        ['GEMINI.md', 'Gemini CLI'],
      ] as const) {
        const f = join(root, name);
        const b = readMaybe(f);
        plans.push({ target: name.toLowerCase().replace('.', '-'), file: f, before: b, after: upsertBridge(b, agent) });
      }
    }
    const dry = args['dry-run'] === true;
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
    const results = plans.map((p) => {
      const diff = changed(p) ? lineDiff(p.file, p.before, p.after) : '';
      const status = !changed(p) ? 'unchanged' : p.before === null ? 'created' : 'updated';
      const backup = !dry && changed(p) ? writeChange(p, stamp) : null;
      return { target: p.target, file: p.file, status, backup, ...(dry ? { diff } : {}) };
    });
    if (!isJson()) for (const w of warnings) note(`warning: ${w}`);
    const needsEnv = !key && !args['no-key'] && selected.some((s) => s.envReference);
    const data = { dry_run: dry, mcp_url: url, results, skipped, warnings };
    const lines = results.map(
      (r) =>
        `${dry ? (r.status === 'unchanged' ? 'unchanged' : 'would update') : r.status.padEnd(9)}  ${r.target.padEnd(14)} ${r.file}`,
    );
    if (dry) lines.push(...results.filter((r) => r.diff).map((r) => r.diff as string));
    for (const s of skipped) lines.push(`skipped    ${s.target.padEnd(14)} ${s.reason}`);
    if (needsEnv && !dry)
      lines.push(`\nThe entries read the key from ${KEY_ENV}: export ${KEY_ENV}=<your key> where the client starts.`);
    return { data, human: lines.join('\n') };
  },
});

function _auth(spec: ClientSpec, key: string | undefined, noKey: boolean, warnings: string[]): Auth {
  if (noKey) return { kind: 'none' };
  if (key !== undefined) return { kind: 'plain', key };
  if (spec.envReference) return { kind: 'env' };
  warnings.push(
    `${spec.label} cannot read ${KEY_ENV}; its entry has no key (rerun with --client ${spec.id} --key <key> to embed one)`,
  );
  return { kind: 'none' };
}

async function _select(pick: boolean, all: boolean, client: string | undefined): Promise<ClientSpec[]> {
  if ([pick, all, client !== undefined].filter(Boolean).length > 1)
    throw usageError('use one of --pick, --all, --client');
  if (all) return [...CLIENTS];
  if (client !== undefined) {
    const spec = clientById(client);
    if (!spec) throw usageError(`unknown client '${client}'; one of ${CLIENT_IDS.join(', ')}`);
    return [spec];
  }
  if (!interactive())
    throw usageError('choose clients with --client <name>, --all or --pick', 'svc connect --client cursor');
  const p = await import('@clack/prompts');
  const chosen = await p.multiselect({
    message: 'Install svc into which clients? (space to select, enter to confirm)',
    options: CLIENTS.map((c) => ({ value: c.id, label: c.label })),
    required: true,
  });
  if (p.isCancel(chosen)) throw usageError('cancelled');
  return CLIENTS.filter((c) => (chosen as string[]).includes(c.id));
}
