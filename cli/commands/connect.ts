/**
 * `svc connect`: writes the svc MCP server into agent clients' configuration (see connect/clients.ts), merging with
 * what is there, so that the client connects on its first start with no other step. In the person's own files the
 * entry carries the key `svc` has stored (a signed-in session without one gets a key made for its org, as
 * `svc provision` does); with no key and no session it is keyless (a development server accepts that; in
 * production the client's own OAuth sign-in takes over). `--env` references $SVC_API_KEY instead and prints the
 * export line; `--key` embeds another key; `--no-key` writes none. Repository files (`--project`) are meant to be
 * committed, so they never get a key unless `--allow-key-in-project` says so.
 */
import { join } from 'node:path';
import { MeSchema } from '../../core/schemas/identity.schemas.js';
import { api, config, reloadConfig } from '../client.js';
import { list, str, svcCommand } from '../command.js';
import { type FileChange, backupDir, changed, planClient, readMaybe, writeChange } from '../connect/apply.js';
import {
  type Auth,
  CLIENT_IDS,
  CLIENTS,
  type ClientSpec,
  KEY_ENV,
  clientById,
  isInstalled,
} from '../connect/clients.js';
import { lineDiff } from '../connect/diff.js';
import { type Gate, claudeProjectGate, geminiGate } from '../connect/gates.js';
import { rulesSection, upsertBridge, upsertRules } from '../connect/rules.js';
import { CliFailure, cancelled, usageError } from '../failure.js';
import { interactive, isJson, note } from '../output.js';
import { keyForSessionOrg } from '../session-key.js';

/** Where the default entry's key comes from, said to the person. */
type KeySource = 'stored' | 'created' | 'flag' | 'env' | 'none';

export default svcCommand({
  meta: { name: 'connect', description: 'Install the svc MCP server into agent clients (Claude, Cursor, VS Code, …)' },
  args: {
    pick: { type: 'boolean', description: 'Choose clients interactively (installed ones pre-selected)' },
    all: { type: 'boolean', description: 'Every supported client that is installed here' },
    client: { type: 'string', description: `A client (repeatable): ${CLIENT_IDS.join(', ')}` },
    project: { type: 'boolean', description: 'Repository-scoped config in the current directory (no key)' },
    rules: { type: 'boolean', description: 'With --project: AGENTS.md section plus CLAUDE.md/GEMINI.md bridges' },
    'dry-run': { type: 'boolean', description: 'Print a diff, write nothing' },
    env: { type: 'boolean', description: `Reference $${KEY_ENV} instead of writing the key (prints the export line)` },
    key: { type: 'string', description: 'Embed this API key instead of the stored one' },
    'no-key': { type: 'boolean', description: 'No key: keyless development server, or the client signs in (OAuth)' },
    'allow-key-in-project': { type: 'boolean', description: 'With --project: allow a key in files meant for git' },
    trust: { type: 'boolean', description: "Clear the client's own gate here (Gemini folder trust, Claude approval)" },
  },
  multiple: ['client'],
  examples: [
    'svc connect --client claude-code',
    'svc connect --client cursor --client codex',
    'svc connect --all --dry-run',
    'svc connect --project --rules --client claude-code --trust',
  ],
  // Long: svc connect is one flow per run: resolve the key, then for each chosen client write its config entry (and
  // rules), with --dry-run and --project on every step.
  async run({ args }) {
    const project = args.project === true;
    const dry = args['dry-run'] === true;
    const key = str(args, 'key');
    const modes = [key !== undefined, args['no-key'] === true, args.env === true].filter(Boolean).length;
    if (modes > 1) throw usageError('use one of --key, --no-key, --env');
    if (args.rules && !project) throw usageError('--rules goes with --project');
    if (args['allow-key-in-project'] && !project) throw usageError('--allow-key-in-project goes with --project');
    if (project && key !== undefined && !args['allow-key-in-project'])
      throw usageError(
        'repository files are meant to be committed: a key there is readable by everyone with the repository. ' +
          'Use --env (each person exports their own key) or --no-key, or add --allow-key-in-project',
        'svc connect --project --env',
      );
    const selected = await _select(args.pick === true, args.all === true, list(args, 'client'), project);
    const url = config().mcpUrl;
    const root = process.cwd();
    const { auth: chosen, source } = await _auth(key, args['no-key'] === true, args.env === true, project, dry);
    if (source === 'flag')
      note('warning: --key writes the key in plaintext; anyone who can read those files can spend your credits');

    const plans: FileChange[] = [];
    const skipped: { target: string; reason: string }[] = [];
    const warnings: string[] = [];
    const entries: { target: string; auth: string; sign_in?: string }[] = [];
    if (chosen.kind === 'env' && !config().apiKey)
      warnings.push('no key is stored yet for the export line: run svc register (or svc login) first');
    for (const spec of selected) {
      const file = project ? spec.projectFile?.(root) : spec.userFile();
      if (!file) {
        skipped.push({ target: spec.id, reason: `${spec.label} has no repository-scoped configuration` });
        continue;
      }
      let auth = chosen;
      if (auth.kind === 'env' && !spec.envReference) {
        warnings.push(
          `${spec.label} cannot read ${KEY_ENV}; its entry has no key (run svc connect --client ${spec.id} without --env to write the stored key)`,
        );
        auth = { kind: 'none' };
      }
      if (auth.kind === 'none' && !spec.oauth && !spec.signIn && !args['no-key'])
        warnings.push(`${spec.label} has no key and cannot sign in by itself; only a development server lets it in`);
      entries.push({
        target: spec.id,
        auth: _authLabel(auth, spec),
        ...(auth.kind === 'none' && (spec.oauth || spec.signIn)
          ? { sign_in: spec.signIn ?? `${spec.label} offers to sign in when it starts` }
          : {}),
      });
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

    const gates = _gates(selected, project, root);
    const trust = await _wantTrust(args.trust === true, gates, dry);
    for (const g of gates) if (trust && g.change) plans.push(g.change);

    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
    const results = plans.map((p) => {
      const diff = changed(p) ? lineDiff(p.file, p.before, p.after) : '';
      const status = !changed(p) ? 'unchanged' : p.before === null ? 'created' : 'updated';
      const backup = !dry && changed(p) ? writeChange(p, stamp) : null;
      return {
        target: p.target,
        file: p.file,
        status,
        backup,
        ...(dry ? { diff: p.secret ? _masked(diff) : diff } : {}),
      };
    });
    if (!isJson()) for (const w of warnings) note(`warning: ${w}`);
    const exportLine = chosen.kind === 'env' ? `export ${KEY_ENV}="$(svc token)"` : null;
    const openGates = gates
      .filter((g) => g.change && !trust)
      .map((g) => ({ client: g.client, message: g.message, step: g.step }));
    const data = {
      dry_run: dry,
      mcp_url: url,
      key_source: source,
      entries,
      results,
      skipped,
      warnings,
      gates: openGates,
      export_line: exportLine,
      backups: results.some((r) => r.backup) ? backupDir(stamp) : null,
    };
    return { data, human: () => _human(data, dry) };
  },
});

function _human(
  data: {
    key_source: KeySource;
    entries: { target: string; auth: string; sign_in?: string }[];
    results: { target: string; file: string; status: string; diff?: string }[];
    skipped: { target: string; reason: string }[];
    gates: { client: string; message: string; step: string }[];
    export_line: string | null;
    backups: string | null;
  },
  dry: boolean,
): string {
  const lines = data.results.map(
    (r) =>
      `${dry ? (r.status === 'unchanged' ? 'unchanged' : 'would update') : r.status.padEnd(9)}  ${r.target.padEnd(20)} ${r.file}`,
  );
  if (dry) lines.push(...data.results.filter((r) => r.diff).map((r) => r.diff as string));
  for (const s of data.skipped) lines.push(`skipped    ${s.target.padEnd(20)} ${s.reason}`);
  if (data.backups) lines.push(`Backups of the files changed (mode 0600, old keys removed): ${data.backups}`);
  const auths = [...new Set(data.entries.map((e) => e.auth))];
  if (auths.length === 1) lines.push(`Authentication: ${auths[0]}.`);
  else for (const e of data.entries) lines.push(`Authentication for ${e.target}: ${e.auth}.`);
  if (data.key_source === 'created')
    lines.push('A key was created for your signed-in org and stored (svc token prints it).');
  for (const g of data.gates) lines.push(`\n${g.message}\n  ${g.step}`);
  if (data.export_line && !dry)
    lines.push(`\nThe entries read the key from ${KEY_ENV}; where the client starts, run:\n  ${data.export_line}`);
  const signIns = data.entries.filter((e) => e.sign_in);
  if (signIns.length > 0) {
    lines.push(
      '\nNo key in the entry: a development server lets the client in keyless; a production server asks it to sign in',
      'with your svc account (OAuth):',
      ...signIns.map((e) => `  ${e.target}: ${e.sign_in}`),
      'Or run svc register (or svc login) and connect again: the entry then carries your key.',
    );
  } else if (!dry) lines.push('\nStart (or restart) the client: it connects to svc on its first start.');
  return lines.join('\n');
}

function _authLabel(auth: Auth, spec: ClientSpec): string {
  if (auth.kind === 'plain') return 'the key in the entry (file mode 0600)';
  if (auth.kind === 'env') return `$${KEY_ENV} from the environment`;
  return spec.oauth || spec.signIn
    ? 'none in the file (development: keyless; production: OAuth sign-in with your svc account)'
    : 'none in the file (development: keyless)';
}

/** A diff with plaintext keys shown only by their first characters. */
function _masked(diff: string): string {
  return diff.replace(/(svc_live_[0-9A-Za-z]{4})[0-9A-Za-z]+/g, '$1…');
}

async function _auth(
  key: string | undefined,
  noKey: boolean,
  env: boolean,
  project: boolean,
  dry: boolean,
): Promise<{ auth: Auth; source: KeySource }> {
  if (noKey) return { auth: { kind: 'none' }, source: 'none' };
  if (env) return { auth: { kind: 'env' }, source: 'env' };
  if (key !== undefined) return { auth: { kind: 'plain', key }, source: 'flag' };
  // A repository file is committed: without an explicit choice it gets no key (keyless or the client's OAuth).
  if (project) return { auth: { kind: 'none' }, source: 'none' };
  const cfg = config();
  if (cfg.apiKey) return { auth: { kind: 'plain', key: cfg.apiKey }, source: 'stored' };
  if (cfg.sessionToken && !dry) {
    const me = await api('GET', '/v1/me', MeSchema, { auth: 'session' });
    await keyForSessionOrg(me.org.id, { createIfMissing: true });
    const stored = reloadConfig().apiKey;
    if (stored) return { auth: { kind: 'plain', key: stored }, source: 'created' };
  }
  return { auth: { kind: 'none' }, source: 'none' };
}

function _gates(selected: readonly ClientSpec[], project: boolean, root: string): Gate[] {
  const out: Gate[] = [];
  if (selected.some((s) => s.id === 'gemini')) out.push(geminiGate(root));
  if (project && selected.some((s) => s.id === 'claude-code')) out.push(claudeProjectGate(root));
  return out;
}

/** `--trust`, or on a terminal a yes/no question when a gate is closed; never asked with --dry-run or --json. */
async function _wantTrust(flag: boolean, gates: Gate[], dry: boolean): Promise<boolean> {
  if (flag) return true;
  const closed = gates.filter((g) => g.change);
  if (closed.length === 0 || dry || !interactive()) return false;
  const p = await import('@clack/prompts');
  for (const g of closed) p.log.warn(g.message);
  const yes = await p.confirm({
    message: `Clear ${closed.length === 1 ? 'this gate' : 'these gates'} now (${closed.map((g) => g.change?.file).join(', ')})?`,
    initialValue: true,
  });
  if (p.isCancel(yes)) throw cancelled();
  return yes === true;
}

async function _select(pick: boolean, all: boolean, clients: string[], project: boolean): Promise<ClientSpec[]> {
  const named = [
    ...new Set(
      clients
        .flatMap((c) => c.split(','))
        .map((c) => c.trim())
        .filter(Boolean),
    ),
  ];
  if ([pick, all, named.length > 0].filter(Boolean).length > 1) throw usageError('use one of --pick, --all, --client');
  if (all) {
    const found = CLIENTS.filter(isInstalled);
    if (found.length === 0)
      throw new CliFailure(
        'api',
        'no_client_installed',
        `none of the supported clients is installed here (${CLIENT_IDS.join(', ')}); name one with --client`,
        null,
        'svc connect --client claude-code',
      );
    return found;
  }
  if (named.length > 0) {
    const unknown = named.filter((c) => !clientById(c));
    if (unknown.length > 0)
      throw usageError(`unknown client '${unknown.join("', '")}'; one of ${CLIENT_IDS.join(', ')}`);
    return CLIENTS.filter((c) => named.includes(c.id));
  }
  if (!interactive())
    throw usageError(
      pick
        ? '--pick asks on a terminal and there is none here; name clients with --client <name> (repeatable) or use --all'
        : 'choose clients with --client <name> (repeatable), --all, or --pick on a terminal',
      'svc connect --client claude-code',
    );
  const p = await import('@clack/prompts');
  const root = process.cwd();
  const initial = CLIENTS.filter((c) => {
    const f = project ? c.projectFile?.(root) : c.userFile();
    return f !== undefined && readMaybe(f) !== null;
  }).map((c) => c.id);
  const chosen = await p.multiselect({
    message: 'Install svc into which clients? (space to select, enter to confirm)',
    options: CLIENTS.map((c) => ({
      value: c.id,
      label: c.label,
      ...(isInstalled(c) ? {} : { hint: 'not found here' }),
    })),
    initialValues: initial,
    required: true,
  });
  if (p.isCancel(chosen)) throw cancelled();
  return CLIENTS.filter((c) => chosen.includes(c.id));
}
