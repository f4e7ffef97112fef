/**
 * Upserts `[mcp_servers.svc]` in a TOML file by editing text: TOML round-trip libraries drop comments, so the
 * table (and any `[mcp_servers.svc.*]` sub-table) is replaced or appended and every other line stays untouched.
 */
const HEADER = /^\s*\[\s*mcp_servers\s*\.\s*(?:"svc"|'svc'|svc)\s*(?:\.[^\]]*)?\]\s*(?:#.*)?$/;
const ANY_HEADER = /^\s*\[/;

function _value(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v && typeof v === 'object')
    return `{ ${Object.entries(v)
      .map(([k, x]) => `${/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k)} = ${_value(x)}`)
      .join(', ')} }`;
  return '""';
}

export function tomlBlock(name: string, entry: Record<string, unknown>): string[] {
  return [`[mcp_servers.${name}]`, ...Object.entries(entry).map(([k, v]) => `${k} = ${_value(v)}`)];
}

export function upsertToml(text: string | null, name: string, entry: Record<string, unknown>): string {
  const block = tomlBlock(name, entry);
  const lines = (text ?? '').split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const start = lines.findIndex((l) => HEADER.test(l));
  if (start === -1) {
    const sep = lines.length > 0 && lines[lines.length - 1]!.trim() !== '' ? [''] : [];
    return `${[...lines, ...sep, ...block].join('\n')}\n`;
  }
  let end = start + 1;
  while (end < lines.length && (!ANY_HEADER.test(lines[end]!) || HEADER.test(lines[end]!))) end++;
  // Keep the blank lines that separated our table from the next one.
  let bodyEnd = end;
  while (bodyEnd > start + 1 && lines[bodyEnd - 1]!.trim() === '') bodyEnd--;
  const next = [...lines.slice(0, start), ...block, ...lines.slice(bodyEnd)];
  return `${next.join('\n')}\n`;
}
