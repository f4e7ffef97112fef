/**
 * The agent clients `svc connect` configures: where each keeps its MCP servers (per OS, per repository with
 * --project, and under the client's own config-location variables), in which format, under which key, how it can
 * reference an environment variable instead of holding the key, how to tell it is installed, and the gate the
 * client itself puts in front of a new server. docs/cli.md has the same table for people; every format here was
 * checked against the client's own documentation (or, for Claude Code, Gemini CLI and Codex, the client itself in
 * test/e2e/clients).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export const SERVER_NAME = 'svc';
export const KEY_ENV = 'SVC_API_KEY';

export type ClientId =
  | 'claude-code'
  | 'claude-desktop'
  | 'cursor'
  | 'windsurf'
  | 'vscode'
  | 'cline'
  | 'zed'
  | 'codex'
  | 'gemini'
  | 'opencode'
  | 'qwen'
  | 'goose'
  | 'roo'
  | 'lmstudio';

/**
 * How the entry authenticates: the key itself (the stored key by default, or `--key`), a reference to
 * $SVC_API_KEY (`--env`), or nothing (keyless development server, or the client's own OAuth sign-in).
 */
export type Auth = { kind: 'env' } | { kind: 'plain'; key: string } | { kind: 'none' };

export interface ClientSpec {
  id: ClientId;
  label: string;
  format: 'json' | 'jsonc' | 'toml' | 'yaml';
  /** Where the servers live inside the file (JSON and YAML clients). */
  container: string[];
  userFile(): string;
  projectFile?: (root: string) => string;
  /** False when the client cannot read the key from the environment: then `--env` writes no key. */
  envReference: boolean;
  /** True when the client runs the MCP authorization (OAuth 2.1) flow itself for an entry without a header. */
  oauth: boolean;
  /** The client's own step that starts that sign-in, where it documents one. */
  signIn?: string;
  entry(url: string, auth: Auth): Record<string, unknown>;
  /** Files or folders the client creates, and its executables: any of them present means it is installed. */
  markers(): string[];
  bins: string[];
}

const home = () => homedir();

function _appData(): string {
  return process.env.APPDATA ?? join(home(), 'AppData', 'Roaming');
}

/** `$XDG_CONFIG_HOME` (when absolute, as the XDG spec asks) or ~/.config. */
function _xdgConfig(): string {
  const x = process.env.XDG_CONFIG_HOME;
  return x?.startsWith('/') ? x : join(home(), '.config');
}

/** The per-OS folder of desktop apps' settings: ~/Library/Application Support, %APPDATA%, $XDG_CONFIG_HOME. */
function _appSupport(): string {
  if (process.platform === 'darwin') return join(home(), 'Library', 'Application Support');
  if (process.platform === 'win32') return _appData();
  return _xdgConfig();
}

/** Claude Code keeps its user file in $CLAUDE_CONFIG_DIR when set, else in the home folder. */
const claudeDir = () => process.env.CLAUDE_CONFIG_DIR || home();
/** Gemini CLI takes $GEMINI_CLI_HOME as its home folder (it then reads `.gemini/` there). */
const geminiHome = () => process.env.GEMINI_CLI_HOME || home();
const codexHome = () => process.env.CODEX_HOME || join(home(), '.codex');
const vscodeUser = () => join(_appSupport(), 'Code', 'User');
/** Zed: ~/.config/zed on macOS, $XDG_CONFIG_HOME/zed on Linux, %APPDATA%\Zed on Windows. */
const zedDir = () =>
  process.platform === 'win32'
    ? join(_appData(), 'Zed')
    : process.platform === 'darwin'
      ? join(home(), '.config', 'zed')
      : join(_xdgConfig(), 'zed');
/** opencode (xdg-basedir) and goose (XDG app strategy) read $XDG_CONFIG_HOME on macOS and Linux alike. */
const opencodeDir = () => join(_xdgConfig(), 'opencode');
const gooseDir = () =>
  process.platform === 'win32' ? join(_appData(), 'Block', 'goose', 'config') : join(_xdgConfig(), 'goose');

const bearer = (auth: Auth, envForm: string): Record<string, string> | undefined =>
  auth.kind === 'none'
    ? undefined
    : { Authorization: auth.kind === 'plain' ? `Bearer ${auth.key}` : `Bearer ${envForm}` };

const withHeaders = (base: Record<string, unknown>, headers: Record<string, string> | undefined) =>
  headers ? { ...base, headers } : base;

export const CLIENTS: readonly ClientSpec[] = [
  {
    id: 'claude-code',
    label: 'Claude Code',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(claudeDir(), '.claude.json'),
    projectFile: (root) => join(root, '.mcp.json'),
    envReference: true,
    oauth: true,
    signIn: 'in Claude Code: /mcp, then svc, then Authenticate',
    entry: (url, auth) => withHeaders({ type: 'http', url }, bearer(auth, `\${${KEY_ENV}}`)),
    markers: () => [join(claudeDir(), '.claude.json'), process.env.CLAUDE_CONFIG_DIR || join(home(), '.claude')],
    bins: ['claude'],
  },
  {
    id: 'claude-desktop',
    label: 'Claude Desktop',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(_appSupport(), 'Claude', 'claude_desktop_config.json'),
    envReference: false,
    // Claude Desktop runs only stdio servers from this file: bridge to the remote server through mcp-remote,
    // which runs the OAuth flow itself when no header is given.
    oauth: true,
    entry: (url, auth) =>
      auth.kind === 'plain'
        ? {
            command: 'npx',
            args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${SVC_AUTH_HEADER}'],
            env: { SVC_AUTH_HEADER: `Bearer ${auth.key}` },
          }
        : { command: 'npx', args: ['-y', 'mcp-remote', url] },
    markers: () => [join(_appSupport(), 'Claude')],
    bins: [],
  },
  {
    id: 'cursor',
    label: 'Cursor',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(home(), '.cursor', 'mcp.json'),
    projectFile: (root) => join(root, '.cursor', 'mcp.json'),
    envReference: true,
    oauth: true,
    entry: (url, auth) => withHeaders({ url }, bearer(auth, `\${env:${KEY_ENV}}`)),
    markers: () => [join(home(), '.cursor')],
    bins: ['cursor'],
  },
  {
    id: 'windsurf',
    label: 'Windsurf',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(home(), '.codeium', 'windsurf', 'mcp_config.json'),
    envReference: true,
    oauth: true,
    entry: (url, auth) => withHeaders({ serverUrl: url }, bearer(auth, `\${env:${KEY_ENV}}`)),
    markers: () => [join(home(), '.codeium', 'windsurf')],
    bins: ['windsurf'],
  },
  {
    id: 'vscode',
    label: 'VS Code',
    format: 'jsonc',
    container: ['servers'],
    userFile: () => join(vscodeUser(), 'mcp.json'),
    projectFile: (root) => join(root, '.vscode', 'mcp.json'),
    envReference: true,
    oauth: true,
    entry: (url, auth) => withHeaders({ type: 'http', url }, bearer(auth, `\${env:${KEY_ENV}}`)),
    markers: () => [vscodeUser()],
    bins: ['code'],
  },
  {
    id: 'cline',
    label: 'Cline',
    format: 'json',
    container: ['mcpServers'],
    userFile: () =>
      join(vscodeUser(), 'globalStorage', 'saoudrizwan.claude-dev', 'settings', 'cline_mcp_settings.json'),
    envReference: false,
    oauth: false,
    entry: (url, auth) => withHeaders({ type: 'streamableHttp', url, disabled: false }, bearer(auth, '')),
    markers: () => [join(vscodeUser(), 'globalStorage', 'saoudrizwan.claude-dev')],
    bins: [],
  },
  {
    id: 'zed',
    label: 'Zed',
    format: 'jsonc',
    container: ['context_servers'],
    userFile: () => join(zedDir(), 'settings.json'),
    projectFile: (root) => join(root, '.zed', 'settings.json'),
    envReference: false,
    oauth: true,
    entry: (url, auth) => withHeaders({ source: 'custom', url }, bearer(auth, '')),
    markers: () => [zedDir()],
    bins: ['zed', 'zeditor'],
  },
  {
    id: 'codex',
    label: 'Codex CLI',
    format: 'toml',
    container: ['mcp_servers'],
    userFile: () => join(codexHome(), 'config.toml'),
    projectFile: (root) => join(root, '.codex', 'config.toml'),
    envReference: true,
    // Codex signs in to an MCP server only when told to (`codex mcp login svc`), never on its own start.
    oauth: false,
    signIn: 'codex mcp login svc',
    entry: (url, auth) =>
      auth.kind === 'env'
        ? { url, bearer_token_env_var: KEY_ENV }
        : auth.kind === 'plain'
          ? { url, http_headers: { Authorization: `Bearer ${auth.key}` } }
          : { url },
    markers: () => [codexHome()],
    bins: ['codex'],
  },
  {
    id: 'gemini',
    label: 'Gemini CLI',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(geminiHome(), '.gemini', 'settings.json'),
    projectFile: (root) => join(root, '.gemini', 'settings.json'),
    envReference: true,
    oauth: true,
    signIn: 'in Gemini CLI: /mcp auth svc',
    entry: (url, auth) => withHeaders({ httpUrl: url }, bearer(auth, `\${${KEY_ENV}}`)),
    markers: () => [join(geminiHome(), '.gemini')],
    bins: ['gemini'],
  },
  {
    // opencode 1.x (npm `opencode-ai`): `mcp.<name>` with `type: "remote"`; `{env:VAR}` substitutes a variable.
    id: 'opencode',
    label: 'opencode',
    format: 'jsonc',
    container: ['mcp'],
    userFile: () => join(opencodeDir(), 'opencode.json'),
    projectFile: (root) => join(root, 'opencode.json'),
    envReference: true,
    oauth: true,
    entry: (url, auth) => withHeaders({ type: 'remote', url, enabled: true }, bearer(auth, `{env:${KEY_ENV}}`)),
    markers: () => [opencodeDir()],
    bins: ['opencode'],
  },
  {
    // Qwen Code (a Gemini CLI fork): the same `mcpServers` entry in ~/.qwen/settings.json or .qwen/settings.json.
    id: 'qwen',
    label: 'Qwen Code',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(home(), '.qwen', 'settings.json'),
    projectFile: (root) => join(root, '.qwen', 'settings.json'),
    envReference: true,
    oauth: true,
    entry: (url, auth) => withHeaders({ httpUrl: url }, bearer(auth, `\${${KEY_ENV}}`)),
    markers: () => [join(home(), '.qwen')],
    bins: ['qwen'],
  },
  {
    // goose: `extensions.<name>` in config.yaml, a Streamable HTTP extension (`type: streamable_http`, `uri`).
    id: 'goose',
    label: 'goose',
    format: 'yaml',
    container: ['extensions'],
    userFile: () => join(gooseDir(), 'config.yaml'),
    envReference: false,
    oauth: true,
    entry: (url, auth) =>
      withHeaders(
        { enabled: true, type: 'streamable_http', name: SERVER_NAME, uri: url, timeout: 300 },
        bearer(auth, ''),
      ),
    markers: () => [gooseDir()],
    bins: ['goose'],
  },
  {
    // Roo Code: mcp_settings.json in its VS Code global storage, or .roo/mcp.json in the repository.
    id: 'roo',
    label: 'Roo Code',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(vscodeUser(), 'globalStorage', 'rooveterinaryinc.roo-cline', 'settings', 'mcp_settings.json'),
    projectFile: (root) => join(root, '.roo', 'mcp.json'),
    envReference: false,
    oauth: false,
    entry: (url, auth) => withHeaders({ type: 'streamable-http', url }, bearer(auth, '')),
    markers: () => [join(vscodeUser(), 'globalStorage', 'rooveterinaryinc.roo-cline')],
    bins: [],
  },
  {
    // LM Studio follows Cursor's mcp.json notation, in ~/.lmstudio/mcp.json.
    id: 'lmstudio',
    label: 'LM Studio',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(home(), '.lmstudio', 'mcp.json'),
    envReference: false,
    oauth: false,
    entry: (url, auth) => withHeaders({ url }, bearer(auth, '')),
    markers: () => [join(home(), '.lmstudio')],
    bins: ['lms'],
  },
];

export const CLIENT_IDS = CLIENTS.map((c) => c.id);

export function clientById(id: string): ClientSpec | undefined {
  return CLIENTS.find((c) => c.id === id);
}

function _onPath(bin: string): boolean {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const exts = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  return dirs.some((d) => exts.some((e) => existsSync(join(d, bin + e))));
}

/** A client counts as installed when its settings folder or file exists or its executable is on PATH. */
export function isInstalled(spec: ClientSpec): boolean {
  return spec.markers().some((m) => existsSync(m)) || spec.bins.some(_onPath);
}
