/**
 * The gates clients put in front of a server they were just given, and the documented file that clears each:
 * Gemini CLI connects no MCP server in a folder it does not trust (`trustedFolders.json`, TRUST_FOLDER), and
 * Claude Code holds a repository's `.mcp.json` servers at "Pending approval" until they are approved
 * (`enabledMcpjsonServers` in `.claude/settings.local.json`, the per-person file Claude Code keeps out of git; Claude
 * Code reads project and local settings only in a folder the person has trusted at its first start there, so the
 * approval counts from then on, as test/e2e/clients shows with the real client).
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { type FileChange, readMaybe } from './apply.js';
import { type ClientId, SERVER_NAME } from './clients.js';
import { upsertJson } from './edit-json.js';

export interface Gate {
  client: ClientId;
  /** What the client does with the new entry until the gate is cleared. */
  message: string;
  /** The step a person takes themselves. */
  step: string;
  /** The documented file change that clears it (`svc connect --trust`), or null when it is already cleared. */
  change: FileChange | null;
}

export function geminiTrustedFoldersFile(): string {
  return (
    process.env.GEMINI_CLI_TRUSTED_FOLDERS_PATH ||
    join(process.env.GEMINI_CLI_HOME || homedir(), '.gemini', 'trustedFolders.json')
  );
}

function _trustedByGemini(rules: unknown, folder: string): boolean {
  if (!rules || typeof rules !== 'object') return false;
  let best = '';
  let level = '';
  for (const [path, l] of Object.entries(rules as Record<string, unknown>)) {
    const eff = l === 'TRUST_PARENT' ? resolve(path, '..') : resolve(path);
    if ((folder === eff || folder.startsWith(`${eff}/`)) && eff.length >= best.length) {
      best = eff;
      level = String(l);
    }
  }
  return level === 'TRUST_FOLDER' || level === 'TRUST_PARENT';
}

/** Gemini CLI: unless the folder it starts in is trusted, MCP servers stay disconnected. */
export function geminiGate(folder: string): Gate {
  const file = geminiTrustedFoldersFile();
  const before = readMaybe(file);
  let rules: unknown = null;
  try {
    rules = before ? JSON.parse(before) : null;
  } catch {
    rules = null;
  }
  const trusted = _trustedByGemini(rules, resolve(folder));
  return {
    client: 'gemini',
    message: trusted
      ? `Gemini CLI trusts ${folder}, so it connects svc here.`
      : `Gemini CLI connects MCP servers only in folders you trust; ${folder} is not trusted yet.`,
    step: 'Trust the folder when Gemini CLI asks at start (or /permissions), or run svc connect again with --trust.',
    change: trusted
      ? null
      : { target: 'gemini-trust', file, before, after: upsertJson(file, before, [resolve(folder)], 'TRUST_FOLDER') },
  };
}

/** Claude Code: a repository's `.mcp.json` server waits at "Pending approval" until it is approved. */
export function claudeProjectGate(root: string): Gate {
  const file = join(root, '.claude', 'settings.local.json');
  const before = readMaybe(file);
  let approved: unknown = null;
  try {
    approved = before ? (JSON.parse(before) as { enabledMcpjsonServers?: unknown }).enabledMcpjsonServers : null;
  } catch {
    approved = null;
  }
  const list = Array.isArray(approved) ? approved.filter((x): x is string => typeof x === 'string') : [];
  const done = list.includes(SERVER_NAME);
  return {
    client: 'claude-code',
    message: done
      ? `Claude Code approves the project server ${SERVER_NAME} here (${file}).`
      : `Claude Code holds servers from .mcp.json at "Pending approval" until you approve them.`,
    step:
      'Approve svc when Claude Code asks at start (or in /mcp), or run svc connect again with --trust to record the ' +
      'approval in .claude/settings.local.json (Claude Code reads it once you have trusted this folder at its start).',
    change: done
      ? null
      : {
          target: 'claude-code-approval',
          file,
          before,
          after: upsertJson(file, before, ['enabledMcpjsonServers'], [...list, SERVER_NAME]),
        },
  };
}
