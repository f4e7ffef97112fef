/**
 * `~/.svc/config.json` (spec §5 "Client storage") resolved with the SVC_* environment on top into one frozen
 * object. Writes are atomic (temp file + rename) with mode 0600: the file holds a key and a session token.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliFailure } from './failure.js';

export interface StoredConfig {
  apiKey?: string;
  /** The key a sign-in into another org set aside (cli/session-key.ts): kept, since keys are shown once. */
  previousApiKey?: string;
  sessionToken?: string;
  apiUrl?: string;
  gatewayUrl?: string;
  mcpUrl?: string;
}

export interface ResolvedConfig {
  readonly apiKey: string | null;
  readonly sessionToken: string | null;
  readonly apiUrl: string;
  readonly gatewayUrl: string;
  readonly mcpUrl: string;
  readonly file: string;
}

/** The local `npm start` ports (docs/config.md). */
export const DEFAULT_URLS = {
  apiUrl: 'http://127.0.0.1:4000',
  gatewayUrl: 'http://127.0.0.1:4001',
  mcpUrl: 'http://127.0.0.1:4002/mcp',
} as const;

export function configFile(): string {
  return join(homedir(), '.svc', 'config.json');
}

export function readStored(file = configFile()): StoredConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return _strings(parsed as Record<string, unknown>);
  } catch {
    /* reported below */
  }
  // No `rm` advice: the file may hold keys that were shown only once; a person repairs it by hand.
  throw new CliFailure(
    'api',
    'config_invalid',
    `${file} is not a JSON object; repair it in an editor (it may hold API keys shown only once)`,
  );
}

function _strings(o: Record<string, unknown>): StoredConfig {
  const out: StoredConfig = {};
  for (const k of ['apiKey', 'previousApiKey', 'sessionToken', 'apiUrl', 'gatewayUrl', 'mcpUrl'] as const) {
    const v = o[k];
    if (typeof v === 'string' && v) out[k] = v;
  }
  return out;
}

const trimSlash = (u: string) => u.replace(/\/+$/, '');

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const file = configFile();
  const s = readStored(file);
  return Object.freeze({
    apiKey: env.SVC_API_KEY || s.apiKey || null,
    sessionToken: s.sessionToken ?? null,
    apiUrl: trimSlash(env.SVC_API_URL || s.apiUrl || DEFAULT_URLS.apiUrl),
    gatewayUrl: trimSlash(env.SVC_GATEWAY_URL || s.gatewayUrl || DEFAULT_URLS.gatewayUrl),
    mcpUrl: env.SVC_MCP_URL || s.mcpUrl || DEFAULT_URLS.mcpUrl,
    file,
  });
}

/** Merge `patch` into the stored file (`null` removes a field) and write it atomically with mode 0600. */
export function saveConfig(patch: { [K in keyof StoredConfig]?: string | null }): void {
  const file = configFile();
  const next: Record<string, string> = { ...readStored(file) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else if (v !== undefined) next[k] = v;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeAtomic(file, `${JSON.stringify(next, null, 2)}\n`, 0o600);
}

/** Write to a sibling temp file, then rename over the target, so a reader never sees half a file. */
export function writeAtomic(file: string, text: string, mode = 0o644): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, file);
}
