/**
 * The nine agent clients `svc connect` configures: where each keeps its MCP servers (per OS, and per repository
 * with --project), in which format, under which key, and how it can reference an environment variable instead
 * of holding the key in plaintext. docs/cli.md has the same table for people.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

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
  | 'gemini';

/** How the entry authenticates: a reference to $SVC_API_KEY, the key itself (--key), or nothing (--no-key). */
export type Auth = { kind: 'env' } | { kind: 'plain'; key: string } | { kind: 'none' };

export interface ClientSpec {
  id: ClientId;
  label: string;
  format: 'json' | 'jsonc' | 'toml';
  /** Where the servers live inside the file (JSON clients). */
  container: string[];
  userFile(): string;
  projectFile?: (root: string) => string;
  /** False when the client cannot read the key from the environment: then only --key authenticates it. */
  envReference: boolean;
  entry(url: string, auth: Auth): Record<string, unknown>;
}

function _appData(): string {
  return process.env.APPDATA ?? join(homedir(), 'AppData', 'Roaming');
}

/** The per-OS folder of desktop apps' settings: ~/Library/Application Support, %APPDATA%, ~/.config. */
function _appSupport(): string {
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support');
  if (process.platform === 'win32') return _appData();
  return process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config');
}

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
    userFile: () => join(homedir(), '.claude.json'),
    projectFile: (root) => join(root, '.mcp.json'),
    envReference: true,
    entry: (url, auth) => withHeaders({ type: 'http', url }, bearer(auth, `\${${KEY_ENV}}`)),
  },
  {
    id: 'claude-desktop',
    label: 'Claude Desktop',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(_appSupport(), 'Claude', 'claude_desktop_config.json'),
    envReference: false,
    // Claude Desktop runs only stdio servers from this file: bridge to the remote server through mcp-remote.
    entry: (url, auth) =>
      auth.kind === 'plain'
        ? {
            command: 'npx',
            args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${SVC_AUTH_HEADER}'],
            env: { SVC_AUTH_HEADER: `Bearer ${auth.key}` },
          }
        : { command: 'npx', args: ['-y', 'mcp-remote', url] },
  },
  {
    id: 'cursor',
    label: 'Cursor',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(homedir(), '.cursor', 'mcp.json'),
    projectFile: (root) => join(root, '.cursor', 'mcp.json'),
    envReference: true,
    entry: (url, auth) => withHeaders({ url }, bearer(auth, `\${env:${KEY_ENV}}`)),
  },
  {
    id: 'windsurf',
    label: 'Windsurf',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(homedir(), '.codeium', 'windsurf', 'mcp_config.json'),
    envReference: true,
    entry: (url, auth) => withHeaders({ serverUrl: url }, bearer(auth, `\${env:${KEY_ENV}}`)),
  },
  {
    id: 'vscode',
    label: 'VS Code',
    format: 'jsonc',
    container: ['servers'],
    userFile: () => join(_appSupport(), 'Code', 'User', 'mcp.json'),
    projectFile: (root) => join(root, '.vscode', 'mcp.json'),
    envReference: true,
    entry: (url, auth) => withHeaders({ type: 'http', url }, bearer(auth, `\${env:${KEY_ENV}}`)),
  },
  {
    id: 'cline',
    label: 'Cline',
    format: 'json',
    container: ['mcpServers'],
    userFile: () =>
      join(
        _appSupport(),
        'Code',
        'User',
        'globalStorage',
        'saoudrizwan.claude-dev',
        'settings',
        'cline_mcp_settings.json',
      ),
    envReference: false,
    entry: (url, auth) => withHeaders({ type: 'streamableHttp', url, disabled: false }, bearer(auth, '')),
  },
  {
    id: 'zed',
    label: 'Zed',
    format: 'jsonc',
    container: ['context_servers'],
    userFile: () =>
      process.platform === 'win32'
        ? join(_appData(), 'Zed', 'settings.json')
        : join(homedir(), '.config', 'zed', 'settings.json'),
    projectFile: (root) => join(root, '.zed', 'settings.json'),
    envReference: false,
    entry: (url, auth) => withHeaders({ source: 'custom', url }, bearer(auth, '')),
  },
  {
    id: 'codex',
    label: 'Codex CLI',
    format: 'toml',
    container: ['mcp_servers'],
    userFile: () => join(process.env.CODEX_HOME ?? join(homedir(), '.codex'), 'config.toml'),
    projectFile: (root) => join(root, '.codex', 'config.toml'),
    envReference: true,
    entry: (url, auth) =>
      auth.kind === 'env'
        ? { url, bearer_token_env_var: KEY_ENV }
        : auth.kind === 'plain'
          ? { url, http_headers: { Authorization: `Bearer ${auth.key}` } }
          : { url },
  },
  {
    id: 'gemini',
    label: 'Gemini CLI',
    format: 'json',
    container: ['mcpServers'],
    userFile: () => join(homedir(), '.gemini', 'settings.json'),
    projectFile: (root) => join(root, '.gemini', 'settings.json'),
    envReference: true,
    entry: (url, auth) => withHeaders({ httpUrl: url }, bearer(auth, `\${${KEY_ENV}}`)),
  },
];

export const CLIENT_IDS = CLIENTS.map((c) => c.id);

export function clientById(id: string): ClientSpec | undefined {
  return CLIENTS.find((c) => c.id === id);
}
