import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { openTerminal } from '../../helpers/terminal.js';
import { SVC_BIN, runSvc, tempHome } from '../../helpers/cli.js';

const MCP = 'http://127.0.0.1:4999/mcp';
const KEY = `svc_live_${'A'.repeat(24)}`;
/** No client executable on PATH: "installed" is decided by the files a test seeds. */
const NO_BINS = { PATH: '/nonexistent' };

/** Each client's file (Linux paths under HOME), where its svc entry lands, and a folder that marks it installed. */
const FILES = {
  'claude-code': { file: '.claude.json', at: ['mcpServers', 'svc'], marker: '.claude' },
  'claude-desktop': {
    file: '.config/Claude/claude_desktop_config.json',
    at: ['mcpServers', 'svc'],
    marker: '.config/Claude',
  },
  cursor: { file: '.cursor/mcp.json', at: ['mcpServers', 'svc'], marker: '.cursor' },
  windsurf: { file: '.codeium/windsurf/mcp_config.json', at: ['mcpServers', 'svc'], marker: '.codeium/windsurf' },
  vscode: { file: '.config/Code/User/mcp.json', at: ['servers', 'svc'], marker: '.config/Code/User' },
  cline: {
    file: '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
    at: ['mcpServers', 'svc'],
    marker: '.config/Code/User/globalStorage/saoudrizwan.claude-dev',
  },
  zed: { file: '.config/zed/settings.json', at: ['context_servers', 'svc'], marker: '.config/zed' },
  codex: { file: '.codex/config.toml', at: ['mcp_servers', 'svc'], marker: '.codex' },
  gemini: { file: '.gemini/settings.json', at: ['mcpServers', 'svc'], marker: '.gemini' },
  opencode: { file: '.config/opencode/opencode.json', at: ['mcp', 'svc'], marker: '.config/opencode' },
  qwen: { file: '.qwen/settings.json', at: ['mcpServers', 'svc'], marker: '.qwen' },
  goose: { file: '.config/goose/config.yaml', at: ['extensions', 'svc'], marker: '.config/goose' },
  roo: {
    file: '.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json',
    at: ['mcpServers', 'svc'],
    marker: '.config/Code/User/globalStorage/rooveterinaryinc.roo-cline',
  },
  lmstudio: { file: '.lmstudio/mcp.json', at: ['mcpServers', 'svc'], marker: '.lmstudio' },
} as const;
type Client = keyof typeof FILES;
const ALL = Object.keys(FILES) as Client[];

function parse(path: string): any {
  const text = readFileSync(path, 'utf8');
  if (path.endsWith('.toml')) return parseToml(text);
  if (path.endsWith('.yaml')) return parseYaml(text);
  const errors: ParseError[] = [];
  const tree = parseJsonc(text, errors, { allowTrailingComma: true });
  expect(errors).toEqual([]);
  return tree;
}

function read(home: string, client: Client): { text: string; tree: any } {
  const path = join(home, FILES[client].file);
  return { text: readFileSync(path, 'utf8'), tree: parse(path) };
}

const at = (tree: any, path: readonly string[]) => path.reduce((o, k) => o?.[k], tree);
const entry = (home: string, client: Client) => at(read(home, client).tree, FILES[client].at);

function seed(home: string, rel: string, text: string): void {
  mkdirSync(dirname(join(home, rel)), { recursive: true });
  writeFileSync(join(home, rel), text);
}

function storeKey(home: string, key = KEY): void {
  seed(home, '.svc/config.json', JSON.stringify({ apiKey: key }));
}

function install(home: string, ...clients: Client[]): void {
  for (const c of clients) mkdirSync(join(home, FILES[c].marker), { recursive: true });
}

/** Every file under a folder, relative paths. */
function walk(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? walk(join(dir, d.name), `${prefix}${d.name}/`) : [`${prefix}${d.name}`],
  );
}

describe('svc connect', () => {
  const homes: (() => void)[] = [];
  afterAll(() => {
    for (const c of homes) c();
  });
  const home = () => {
    const h = tempHome();
    homes.push(h.cleanup);
    return h.home;
  };

  it('by default writes the stored key into each client in its own format (0600), keeping other servers and comments; a re-run changes nothing', async () => {
    const h = home();
    storeKey(h);
    install(h, ...ALL);
    seed(
      h,
      FILES.zed.file,
      '// my zed settings\n{\n  "theme": "One Dark", // keep me\n  "context_servers": { "other": { "source": "custom", "command": "x" } }\n}\n',
    );
    seed(
      h,
      FILES.vscode.file,
      '{\n  // workspace tools\n  "servers": { "other": { "type": "stdio", "command": "y" } },\n}\n',
    );
    seed(h, FILES.codex.file, '# my codex\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "x" # keep me\n');
    seed(h, FILES['claude-code'].file, '{"numStartups": 3, "mcpServers": {"other": {"command": "z"}}}\n');
    seed(
      h,
      FILES.goose.file,
      '# my goose\nGOOSE_PROVIDER: openai # keep me\nextensions:\n  developer:\n    enabled: true\n',
    );
    const env = { SVC_MCP_URL: MCP, ...NO_BINS };
    const first = await runSvc(['connect', '--all', '--json'], { home: h, env });
    expect(first.code, first.stderr).toBe(0);
    const data = first.json().data;
    expect(data.key_source).toBe('stored');
    expect(data.results.map((r: { target: string }) => r.target).sort()).toEqual([...ALL].sort());
    const bearer = { Authorization: `Bearer ${KEY}` };
    expect(entry(h, 'claude-code')).toEqual({ type: 'http', url: MCP, headers: bearer });
    expect(entry(h, 'cursor')).toEqual({ url: MCP, headers: bearer });
    expect(entry(h, 'windsurf')).toEqual({ serverUrl: MCP, headers: bearer });
    expect(entry(h, 'vscode')).toEqual({ type: 'http', url: MCP, headers: bearer });
    expect(entry(h, 'cline')).toEqual({ type: 'streamableHttp', url: MCP, disabled: false, headers: bearer });
    expect(entry(h, 'zed')).toEqual({ source: 'custom', url: MCP, headers: bearer });
    expect(entry(h, 'codex')).toEqual({ url: MCP, http_headers: bearer });
    expect(entry(h, 'gemini')).toEqual({ httpUrl: MCP, headers: bearer });
    expect(entry(h, 'opencode')).toEqual({ type: 'remote', url: MCP, enabled: true, headers: bearer });
    expect(entry(h, 'qwen')).toEqual({ httpUrl: MCP, headers: bearer });
    expect(entry(h, 'goose')).toEqual({
      enabled: true,
      type: 'streamable_http',
      name: 'svc',
      uri: MCP,
      timeout: 300,
      headers: bearer,
    });
    expect(entry(h, 'roo')).toEqual({ type: 'streamable-http', url: MCP, headers: bearer });
    expect(entry(h, 'lmstudio')).toEqual({ url: MCP, headers: bearer });
    expect(entry(h, 'claude-desktop')).toEqual({
      command: 'npx',
      args: ['-y', 'mcp-remote', MCP, '--header', 'Authorization:${SVC_AUTH_HEADER}'],
      env: { SVC_AUTH_HEADER: `Bearer ${KEY}` },
    });
    // Every file holding the key is the owner's only, the ones that existed (0644 here) included.
    for (const c of ALL) expect(statSync(join(h, FILES[c].file)).mode & 0o777, c).toBe(0o600);
    // Other servers and comments survive.
    expect(read(h, 'zed').text).toContain('// keep me');
    expect(at(read(h, 'zed').tree, ['context_servers', 'other'])).toEqual({ source: 'custom', command: 'x' });
    expect(read(h, 'vscode').text).toContain('// workspace tools');
    expect(read(h, 'codex').text).toContain('command = "x" # keep me');
    expect(read(h, 'goose').text).toContain('GOOSE_PROVIDER: openai # keep me');
    expect(at(read(h, 'goose').tree, ['extensions', 'developer'])).toEqual({ enabled: true });
    expect(read(h, 'claude-code').tree.numStartups).toBe(3);
    expect(at(read(h, 'claude-code').tree, ['mcpServers', 'other'])).toEqual({ command: 'z' });

    const before = ALL.map((c) => read(h, c).text);
    const second = await runSvc(['connect', '--all', '--json'], { home: h, env });
    expect(second.json().data.results.every((r: { status: string }) => r.status === 'unchanged')).toBe(true);
    expect(ALL.map((c) => read(h, c).text)).toEqual(before);
  });

  it('--env references SVC_API_KEY in each client that can read it and prints the export line', async () => {
    const h = home();
    storeKey(h);
    const run = await runSvc(
      ['connect', '--env', '--client', 'claude-code', '--client', 'cursor', '--client', 'codex', '--client', 'cline'],
      { home: h, env: { SVC_MCP_URL: MCP } },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(entry(h, 'claude-code').headers).toEqual({ Authorization: 'Bearer ${SVC_API_KEY}' });
    expect(entry(h, 'cursor').headers).toEqual({ Authorization: 'Bearer ${env:SVC_API_KEY}' });
    expect(entry(h, 'codex')).toEqual({ url: MCP, bearer_token_env_var: 'SVC_API_KEY' });
    expect(entry(h, 'cline').headers).toBeUndefined();
    expect(run.stderr).toContain('Cline cannot read SVC_API_KEY');
    expect(run.stdout).toContain('export SVC_API_KEY="$(svc token)"');
    expect(
      JSON.stringify(ALL.filter((c) => existsSync(join(h, FILES[c].file))).map((c) => read(h, c).text)),
    ).not.toContain(KEY);
  });

  it('svc token prints the stored key alone; with none it says to register', async () => {
    const h = home();
    const none = await runSvc(['token'], { home: h });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no_key_stored');
    expect(none.stderr).toContain('svc register');
    storeKey(h);
    const t = await runSvc(['token'], { home: h });
    expect(t.code).toBe(0);
    expect(t.stdout).toBe(`${KEY}\n`);
  });

  it('with no key and no session the entry is keyless; --dry-run writes nothing; --key embeds another key with a warning', async () => {
    const h = home();
    const keyless = await runSvc(['connect', '--client', 'gemini', '--json'], { home: h, env: { SVC_MCP_URL: MCP } });
    expect(keyless.json().data.key_source).toBe('none');
    expect(entry(h, 'gemini')).toEqual({ httpUrl: MCP });
    // Without a key, each client's own sign-in step is named (production asks for it); one with none is warned.
    const codex = await runSvc(['connect', '--client', 'codex', '--client', 'claude-code'], {
      home: h,
      env: { SVC_MCP_URL: MCP },
    });
    expect(codex.stdout).toContain('codex: codex mcp login svc');
    expect(codex.stdout).toContain('claude-code: in Claude Code: /mcp, then svc, then Authenticate');
    const roo = await runSvc(['connect', '--client', 'roo'], { home: h, env: { SVC_MCP_URL: MCP } });
    expect(roo.stderr).toContain('Roo Code has no key and cannot sign in by itself');

    const dry = await runSvc(['connect', '--client', 'cursor', '--dry-run'], { home: h, env: { SVC_MCP_URL: MCP } });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`+      "url": "${MCP}"`);
    expect(existsSync(join(h, FILES.cursor.file))).toBe(false);

    const other = `svc_live_${'b'.repeat(24)}`;
    const plain = await runSvc(['connect', '--client', 'codex', '--key', other], { home: h });
    expect(plain.stderr).toContain('plaintext');
    expect(entry(h, 'codex').http_headers).toEqual({ Authorization: `Bearer ${other}` });
    await runSvc(['connect', '--client', 'codex', '--no-key'], { home: h });
    expect(entry(h, 'codex').http_headers).toBeUndefined();

    expect((await runSvc(['connect', '--client', 'emacs'], { home: h })).code).toBe(2);
    expect((await runSvc(['connect', '--rules', '--all'], { home: h })).code).toBe(2);
    expect((await runSvc(['connect', '--env', '--no-key', '--client', 'codex'], { home: h })).code).toBe(2);
  });

  it('backups go to ~/.svc/backups (0600), never beside the file, and lose the key the new file no longer has', async () => {
    const h = home();
    const repo = home();
    const old = `svc_live_${'o'.repeat(24)}`;
    seed(
      repo,
      '.mcp.json',
      `{\n  "mcpServers": {\n    "svc": { "type": "http", "url": "${MCP}", "headers": { "Authorization": "Bearer ${old}" } },\n    "other": { "command": "z", "env": { "TOKEN": "keep-me" } }\n  }\n}\n`,
    );
    writeFileSync(join(repo, 'AGENTS.md'), '# Agents\n');
    const run = await runSvc(['connect', '--project', '--rules', '--client', 'claude-code', '--json'], {
      home: h,
      cwd: repo,
      env: { SVC_MCP_URL: MCP },
    });
    expect(run.code, run.stderr).toBe(0);
    // Nothing but what the command writes is left in the work tree: no .bak files.
    expect(walk(repo).sort()).toEqual(['.mcp.json', 'AGENTS.md', 'CLAUDE.md', 'GEMINI.md']);
    expect(readFileSync(join(repo, '.mcp.json'), 'utf8')).not.toContain(old);
    const dir = run.json().data.backups as string;
    expect(dir.startsWith(join(h, '.svc', 'backups'))).toBe(true);
    const files = walk(dir);
    expect(files.length).toBe(2); // .mcp.json and AGENTS.md existed
    for (const f of files) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    const mcpBackup = readFileSync(join(dir, files.find((f) => f.endsWith('.mcp.json'))!), 'utf8');
    expect(mcpBackup).not.toContain(old);
    expect(mcpBackup).toContain('svc_live_REMOVED_BY_SVC_CONNECT');
    expect(mcpBackup).toContain('keep-me');
  });

  it('--project never writes a key unless told: the stored key stays out, --key is refused without --allow-key-in-project', async () => {
    const h = home();
    storeKey(h);
    const repo = home();
    const run = await runSvc(['connect', '--project', '--client', 'cursor'], {
      home: h,
      cwd: repo,
      env: { SVC_MCP_URL: MCP },
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(readFileSync(join(repo, '.cursor/mcp.json'), 'utf8')).mcpServers.svc).toEqual({ url: MCP });
    const refused = await runSvc(['connect', '--project', '--client', 'codex', '--key', KEY], { home: h, cwd: repo });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--allow-key-in-project');
    expect(existsSync(join(repo, '.codex'))).toBe(false);
    const allowed = await runSvc(
      ['connect', '--project', '--client', 'codex', '--key', KEY, '--allow-key-in-project'],
      {
        home: h,
        cwd: repo,
      },
    );
    expect(allowed.code).toBe(0);
    expect(readFileSync(join(repo, '.codex/config.toml'), 'utf8')).toContain(KEY);
  });

  it('--project --rules writes repository config, an AGENTS.md section between markers and the CLAUDE.md/GEMINI.md bridges', async () => {
    const repo = home();
    writeFileSync(join(repo, 'AGENTS.md'), '# Agents\n\nOur own rules.\n');
    const clients = ALL.flatMap((c) => ['--client', c]);
    const run = () =>
      runSvc(['connect', '--project', '--rules', ...clients, '--json'], {
        home: home(),
        cwd: repo,
        env: { SVC_MCP_URL: MCP },
      });
    const first = await run();
    expect(first.code).toBe(0);
    expect(
      first
        .json()
        .data.skipped.map((s: { target: string }) => s.target)
        .sort(),
    ).toEqual(['claude-desktop', 'cline', 'goose', 'lmstudio', 'windsurf']);
    expect(JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')).mcpServers.svc.url).toBe(MCP);
    expect(existsSync(join(repo, '.cursor/mcp.json'))).toBe(true);
    expect(existsSync(join(repo, '.vscode/mcp.json'))).toBe(true);
    expect(parse(join(repo, 'opencode.json')).mcp.svc).toEqual({ type: 'remote', url: MCP, enabled: true });
    expect(parse(join(repo, '.qwen/settings.json')).mcpServers.svc).toEqual({ httpUrl: MCP });
    expect(parse(join(repo, '.roo/mcp.json')).mcpServers.svc).toEqual({ type: 'streamable-http', url: MCP });
    expect(parseToml(readFileSync(join(repo, '.codex/config.toml'), 'utf8'))).toMatchObject({
      mcp_servers: { svc: { url: MCP } },
    });
    const agents = readFileSync(join(repo, 'AGENTS.md'), 'utf8');
    expect(agents).toContain('Our own rules.');
    expect(agents).toMatch(/<!-- svc:begin[\s\S]*<!-- svc:end -->/);
    expect(readFileSync(join(repo, 'CLAUDE.md'), 'utf8')).toContain('@AGENTS.md');
    expect(readFileSync(join(repo, 'GEMINI.md'), 'utf8')).toContain('@AGENTS.md');
    const second = await run();
    expect(second.json().data.results.every((r: { status: string }) => r.status === 'unchanged')).toBe(true);
    expect(readFileSync(join(repo, 'AGENTS.md'), 'utf8')).toBe(agents);
  });

  it('says the clients own gates and --trust clears them through the files the clients document', async () => {
    const h = home();
    const repo = home();
    const said = await runSvc(['connect', '--project', '--client', 'claude-code', '--client', 'gemini', '--json'], {
      home: h,
      cwd: repo,
      env: { SVC_MCP_URL: MCP },
    });
    const gates = said.json().data.gates as { client: string; message: string; step: string }[];
    expect(gates.map((g) => g.client).sort()).toEqual(['claude-code', 'gemini']);
    expect(gates.find((g) => g.client === 'claude-code')!.message).toContain('Pending approval');
    expect(gates.find((g) => g.client === 'gemini')!.message).toContain('trust');
    expect(existsSync(join(repo, '.claude/settings.local.json'))).toBe(false);
    expect(existsSync(join(h, '.gemini/trustedFolders.json'))).toBe(false);

    const trusted = await runSvc(
      ['connect', '--project', '--client', 'claude-code', '--client', 'gemini', '--trust', '--json'],
      {
        home: h,
        cwd: repo,
        env: { SVC_MCP_URL: MCP },
      },
    );
    expect(trusted.json().data.gates).toEqual([]);
    expect(JSON.parse(readFileSync(join(repo, '.claude/settings.local.json'), 'utf8'))).toEqual({
      enabledMcpjsonServers: ['svc'],
    });
    expect(JSON.parse(readFileSync(join(h, '.gemini/trustedFolders.json'), 'utf8'))).toEqual({
      [repo]: 'TRUST_FOLDER',
    });
    const again = await runSvc(['connect', '--project', '--client', 'claude-code', '--client', 'gemini', '--json'], {
      home: h,
      cwd: repo,
      env: { SVC_MCP_URL: MCP },
    });
    expect(again.json().data.gates).toEqual([]);
  });

  it('writes where the client reads: CLAUDE_CONFIG_DIR, GEMINI_CLI_HOME, CODEX_HOME, XDG_CONFIG_HOME', async () => {
    const h = home();
    const elsewhere = home();
    const env = {
      SVC_MCP_URL: MCP,
      CLAUDE_CONFIG_DIR: join(elsewhere, 'claude'),
      GEMINI_CLI_HOME: join(elsewhere, 'gemini'),
      CODEX_HOME: join(elsewhere, 'codex'),
      XDG_CONFIG_HOME: join(elsewhere, 'xdg'),
    };
    const run = await runSvc(
      [
        'connect',
        ...['claude-code', 'gemini', 'codex', 'zed', 'vscode', 'opencode', 'goose'].flatMap((c) => ['--client', c]),
      ],
      { home: h, env },
    );
    expect(run.code, run.stderr).toBe(0);
    for (const f of [
      'claude/.claude.json',
      'gemini/.gemini/settings.json',
      'codex/config.toml',
      'xdg/zed/settings.json',
      'xdg/Code/User/mcp.json',
      'xdg/opencode/opencode.json',
      'xdg/goose/config.yaml',
    ])
      expect(existsSync(join(elsewhere, f)), f).toBe(true);
    expect(walk(h).filter((f) => !f.startsWith('.svc/'))).toEqual([]);
  });

  it('--all touches only installed clients; repeated --client keeps each; a one-line neighbour keeps its shape', async () => {
    const h = home();
    install(h, 'cursor', 'codex');
    const all = await runSvc(['connect', '--all', '--json'], { home: h, env: { SVC_MCP_URL: MCP, ...NO_BINS } });
    expect(all.code, all.stderr).toBe(0);
    expect(
      all
        .json()
        .data.results.map((r: { target: string }) => r.target)
        .sort(),
    ).toEqual(['codex', 'cursor']);
    expect(walk(h).sort()).toEqual(['.codex/config.toml', '.cursor/mcp.json']);

    const none = await runSvc(['connect', '--all'], { home: home(), env: { SVC_MCP_URL: MCP, ...NO_BINS } });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('--client');

    const h2 = home();
    const neighbour = '{\n  "mcpServers": {\n    "other": { "command": "z" }\n  }\n}\n';
    seed(h2, FILES.cursor.file, neighbour);
    const two = await runSvc(['connect', '--client', 'cursor', '--client', 'windsurf', '--json'], {
      home: h2,
      env: { SVC_MCP_URL: MCP },
    });
    expect(two.json().data.results.map((r: { target: string }) => r.target)).toEqual(['cursor', 'windsurf']);
    const text = read(h2, 'cursor').text;
    expect(text).toContain('    "other": { "command": "z" },\n    "svc": {');
  });

  it('--pick without a terminal says what to use instead', async () => {
    const r = await runSvc(['connect', '--pick'], { home: home() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--pick asks on a terminal');
    expect(r.stderr).toContain('--client');
  });

  it('--pick on a terminal pre-selects clients whose file exists; Ctrl-C exits 130 (driven through tmux)', async () => {
    const h = home();
    seed(h, FILES.gemini.file, '{}\n');
    const cmd = `cd ${h} && env HOME=${h} SVC_MCP_URL=${MCP} NO_COLOR=1 ${process.execPath} ${SVC_BIN} connect --pick; echo "exit=$?"; sleep 30`;
    const term = await openTerminal(cmd);
    try {
      await term.waitFor(/Claude Code/);
      // Gemini CLI is pre-selected; add Claude Code (first option) and confirm.
      await term.keys('Space');
      await term.keys('Enter');
      // Gemini's folder-trust gate is closed here: offered as a yes/no question; answer no.
      await term.waitFor(/Clear this gate now/);
      await term.keys('Right', 'Enter');
      await term.waitFor(/exit=0/);
    } finally {
      await term.close();
    }
    expect(entry(h, 'claude-code').url).toBe(MCP);
    expect(entry(h, 'gemini').httpUrl).toBe(MCP);
    expect(existsSync(join(h, FILES.cursor.file))).toBe(false);
    expect(existsSync(join(h, '.gemini/trustedFolders.json'))).toBe(false);

    const h2 = home();
    const term2 = await openTerminal(cmd.replaceAll(h, h2));
    try {
      await term2.waitFor(/Claude Code/);
      await term2.keys('C-c');
      const screen = await term2.waitFor(/exit=\d+/);
      expect(screen).toContain('exit=130');
      expect(screen).not.toContain('usage:');
    } finally {
      await term2.close();
    }
    expect(walk(h2)).toEqual([]);
  });
});
