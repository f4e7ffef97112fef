/**
 * `svc connect --project --rules`: an svc section in AGENTS.md between markers (replaced in place on a re-run),
 * plus the thin bridges Claude Code (CLAUDE.md) and Gemini CLI (GEMINI.md) need, which import AGENTS.md.
 */
export const BEGIN = '<!-- svc:begin (managed by `svc connect --rules`) -->';
export const END = '<!-- svc:end -->';
export const IMPORT_LINE = '@AGENTS.md';

export function rulesSection(mcpUrl: string): string {
  return [
    BEGIN,
    '## svc: paid third-party APIs',
    '',
    `- The \`svc\` MCP server (${mcpUrl}) searches the API marketplace and calls APIs; each call is charged in cents.`,
    '- Before a paid call, check the price with `get_schema` (or `svc call <slug> <endpoint> --quote`).',
    '- Pass an idempotency key on retries (`svc call … --idempotency-key <id>`) so a retry is not charged twice.',
    '- Never print, commit or paste the API key; it comes from the `SVC_API_KEY` environment variable.',
    '- A 428 `terms_not_accepted` needs a human: tell the user to run `svc terms accept <slug>`.',
    '- A 402 means credits or caps ran out: tell the user (`svc billing checkout --pack starter`); do not retry.',
    END,
  ].join('\n');
}

/** AGENTS.md with our section inserted or replaced; the rest of the file is kept as it is. */
export function upsertRules(text: string | null, section: string): string {
  const src = text ?? '';
  const b = src.indexOf(BEGIN.slice(0, 14));
  const e = src.indexOf(END);
  if (b !== -1 && e > b) return `${src.slice(0, b)}${section}${src.slice(e + END.length)}`;
  const sep = src === '' ? '' : src.endsWith('\n\n') ? '' : src.endsWith('\n') ? '\n' : '\n\n';
  return `${src}${sep}${section}\n`;
}

/** CLAUDE.md / GEMINI.md: make sure the file imports AGENTS.md; nothing else is touched. */
export function upsertBridge(text: string | null, agent: string): string {
  const src = text ?? '';
  if (src.split('\n').some((l) => l.trim() === IMPORT_LINE)) return src;
  const line = `${IMPORT_LINE}\n`;
  if (src === '') return `# ${agent}\n\nProject rules for agents live in AGENTS.md:\n\n${line}`;
  return `${src}${src.endsWith('\n') ? '' : '\n'}\n${line}`;
}
