import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { openTerminal } from '../../helpers/terminal.js';
import { afterAll, describe, expect, it } from 'vitest';
import { SVC_BIN, runSvc, tempHome } from '../../helpers/cli.js';

const MCP = 'http://127.0.0.1:4999/mcp';

/** Each client's file (Linux paths under HOME), and where its svc entry lands. */
const FILES = {
  'claude-code': { file: '.claude.json', at: ['mcpServers', 'svc'] },
  'claude-desktop': { file: '.config/Claude/claude_desktop_config.json', at: ['mcpServers', 'svc'] },
  cursor: { file: '.cursor/mcp.json', at: ['mcpServers', 'svc'] },
  windsurf: { file: '.codeium/windsurf/mcp_config.json', at: ['mcpServers', 'svc'] },
  vscode: { file: '.config/Code/User/mcp.json', at: ['servers', 'svc'] },
  cline: {
    file: '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
    at: ['mcpServers', 'svc'],
  },
  zed: { file: '.config/zed/settings.json', at: ['context_servers', 'svc'] },
  codex: { file: '.codex/config.toml', at: ['mcp_servers', 'svc'] },
  gemini: { file: '.gemini/settings.json', at: ['mcpServers', 'svc'] },
} as const;

function read(home: string, client: keyof typeof FILES): { text: string; tree: any } {
  const text = readFileSync(join(home, FILES[client].file), 'utf8');
  if (client === 'codex') return { text, tree: parseToml(text) };
  const errors: ParseError[] = [];
  const tree = parseJsonc(text, errors, { allowTrailingComma: true });
  expect(errors).toEqual([]);
  return { text, tree };
}

const at = (tree: any, path: readonly string[]) => path.reduce((o, k) => o?.[k], tree);

function seed(home: string, rel: string, text: string): void {
  mkdirSync(dirname(join(home, rel)), { recursive: true });
  writeFileSync(join(home, rel), text);
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

  it('writes each of the nine clients in its own format, keeping other servers and comments; a re-run changes nothing', async () => {
    const h = home();
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
    const env = { SVC_MCP_URL: MCP };
    const first = await runSvc(['connect', '--all', '--json'], { home: h, env });
    expect(first.code).toBe(0);
    expect(
      first
        .json()
        .data.results.map((r: { status: string }) => r.status)
        .sort(),
    ).toEqual(['created', 'created', 'created', 'created', 'created', 'updated', 'updated', 'updated', 'updated']);
    for (const client of Object.keys(FILES) as (keyof typeof FILES)[]) {
      const { tree } = read(h, client);
      expect(at(tree, FILES[client].at), client).toBeTruthy();
    }
    expect(at(read(h, 'claude-code').tree, ['mcpServers', 'svc'])).toEqual({
      type: 'http',
      url: MCP,
      headers: { Authorization: 'Bearer ${SVC_API_KEY}' },
    });
    expect(at(read(h, 'windsurf').tree, ['mcpServers', 'svc']).serverUrl).toBe(MCP);
    expect(at(read(h, 'gemini').tree, ['mcpServers', 'svc']).httpUrl).toBe(MCP);
    expect(at(read(h, 'cline').tree, ['mcpServers', 'svc']).type).toBe('streamableHttp');
    expect(at(read(h, 'vscode').tree, ['servers', 'svc'])).toMatchObject({ type: 'http', url: MCP });
    expect(at(read(h, 'cursor').tree, ['mcpServers', 'svc']).headers.Authorization).toBe('Bearer ${env:SVC_API_KEY}');
    expect(at(read(h, 'codex').tree, ['mcp_servers', 'svc'])).toEqual({
      url: MCP,
      bearer_token_env_var: 'SVC_API_KEY',
    });
    expect(at(read(h, 'claude-desktop').tree, ['mcpServers', 'svc']).args).toEqual(['-y', 'mcp-remote', MCP]);
    // Other servers and comments survive.
    expect(read(h, 'zed').text).toContain('// keep me');
    expect(at(read(h, 'zed').tree, ['context_servers', 'other'])).toEqual({ source: 'custom', command: 'x' });
    expect(read(h, 'vscode').text).toContain('// workspace tools');
    expect(read(h, 'codex').text).toContain('command = "x" # keep me');
    expect(read(h, 'claude-code').tree.numStartups).toBe(3);
    expect(at(read(h, 'claude-code').tree, ['mcpServers', 'other'])).toEqual({ command: 'z' });
    // Backups of the files that existed.
    expect(readdirSync(join(h, '.codex')).some((f) => f.startsWith('config.toml.bak-'))).toBe(true);

    const before = Object.keys(FILES).map((c) => read(h, c as keyof typeof FILES).text);
    const second = await runSvc(['connect', '--all', '--json'], { home: h, env });
    expect(second.json().data.results.every((r: { status: string }) => r.status === 'unchanged')).toBe(true);
    expect(Object.keys(FILES).map((c) => read(h, c as keyof typeof FILES).text)).toEqual(before);
  });

  it('--dry-run prints a diff and writes nothing; --key embeds the key with a warning; --no-key writes none', async () => {
    const h = home();
    const dry = await runSvc(['connect', '--client', 'cursor', '--dry-run'], { home: h, env: { SVC_MCP_URL: MCP } });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`+      "url": "${MCP}"`);
    expect(existsSync(join(h, FILES.cursor.file))).toBe(false);

    const key = `svc_live_${'a'.repeat(24)}`;
    const plain = await runSvc(['connect', '--client', 'codex', '--key', key], { home: h });
    expect(plain.stderr).toContain('plaintext');
    expect(at(read(h, 'codex').tree, ['mcp_servers', 'svc']).http_headers).toEqual({ Authorization: `Bearer ${key}` });
    const desktop = await runSvc(['connect', '--client', 'claude-desktop', '--key', key], { home: h });
    expect(desktop.code).toBe(0);
    expect(at(read(h, 'claude-desktop').tree, ['mcpServers', 'svc']).env).toEqual({ SVC_AUTH_HEADER: `Bearer ${key}` });
    await runSvc(['connect', '--client', 'gemini', '--no-key'], { home: h });
    expect(at(read(h, 'gemini').tree, ['mcpServers', 'svc']).headers).toBeUndefined();

    expect((await runSvc(['connect', '--client', 'emacs'], { home: h })).code).toBe(2);
    expect((await runSvc(['connect'], { home: h })).code).toBe(2);
    expect((await runSvc(['connect', '--rules', '--all'], { home: h })).code).toBe(2);
  });

  it('--project --rules writes repository config, an AGENTS.md section between markers and the CLAUDE.md/GEMINI.md bridges', async () => {
    const repo = home();
    writeFileSync(join(repo, 'AGENTS.md'), '# Agents\n\nOur own rules.\n');
    const run = () =>
      runSvc(['connect', '--project', '--rules', '--all', '--json'], {
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
    ).toEqual(['claude-desktop', 'cline', 'windsurf']);
    expect(JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')).mcpServers.svc.url).toBe(MCP);
    expect(existsSync(join(repo, '.cursor/mcp.json'))).toBe(true);
    expect(existsSync(join(repo, '.vscode/mcp.json'))).toBe(true);
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

  it('--pick offers a multi-select on a terminal (driven through tmux)', async () => {
    const h = home();
    const term = await openTerminal(
      `env HOME=${h} SVC_MCP_URL=${MCP} NO_COLOR=1 ${process.execPath} ${SVC_BIN} connect --pick; echo "exit=$?"; sleep 30`,
    );
    try {
      await term.waitFor(/Claude Code/);
      // First option (Claude Code): select; down twice (Cursor): select; enter.
      await term.keys('Space');
      await term.keys('Down', 'Down', 'Space');
      await term.keys('Enter');
      await term.waitFor(/exit=0/);
    } finally {
      await term.close();
    }
    expect(at(read(h, 'claude-code').tree, ['mcpServers', 'svc']).url).toBe(MCP);
    expect(at(read(h, 'cursor').tree, ['mcpServers', 'svc']).url).toBe(MCP);
    expect(existsSync(join(h, FILES.windsurf.file))).toBe(false);
  });
});
