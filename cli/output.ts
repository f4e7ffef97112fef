/**
 * Owns stdout and stderr: one JSON document with `--json` (`{ ok: true, data }` or `{ ok: false, error }`), human
 * lines otherwise. Colors only on a TTY and never with NO_COLOR; money as dollars and cents, times relative.
 */
import type { CliFailure } from './failure.js';

let jsonMode = false;
export function setJsonMode(on: boolean): void {
  jsonMode = on;
}
export function isJson(): boolean {
  return jsonMode;
}

export function interactive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY) && !jsonMode;
}

export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return Boolean(stream.isTTY) && !('NO_COLOR' in process.env) && process.env.TERM !== 'dumb';
}

const paint = (code: number, stream?: NodeJS.WriteStream) => (s: string) =>
  useColor(stream) ? `\u001B[${code}m${s}\u001B[39m` : s;
export const red = paint(31, process.stderr);
export const dim = (s: string) => (useColor() ? `\u001B[2m${s}\u001B[22m` : s);
export const bold = (s: string) => (useColor() ? `\u001B[1m${s}\u001B[22m` : s);

export function stripAnsi(s: string): string {
  // biome-ignore lint: the ESC character is the point of this pattern
  return s.replace(/\u001B\[[0-9;]*m/g, '');
}

/** What a command hands back: the JSON `data`, and how to say it to a person. */
export interface CommandResult {
  data: unknown;
  human?: string | (() => string | Promise<string>);
}

export async function emitResult(r: CommandResult): Promise<void> {
  if (jsonMode) {
    process.stdout.write(`${JSON.stringify({ ok: true, data: r.data ?? null })}\n`);
    return;
  }
  const text = typeof r.human === 'function' ? await r.human() : (r.human ?? (await describe(r.data)));
  if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function emitFailure(f: CliFailure): void {
  if (jsonMode) {
    const error = { code: f.code, status: f.status, message: f.message, next: f.next };
    process.stdout.write(`${JSON.stringify({ ok: false, error })}\n`);
    return;
  }
  const status = f.status ? ` (${f.status} ${f.code})` : f.kind === 'api' ? ` (${f.code})` : '';
  process.stderr.write(`${red('error')}: ${f.message}${status}\n`);
  if (f.next) process.stderr.write(`next: run \`${f.next}\`\n`);
}

export function note(line: string): void {
  if (!jsonMode) process.stderr.write(`${line}\n`);
}

/** A line the person must act on (a URL to open, a code to type): on stderr even with --json, never on stdout. */
export function instruct(line: string): void {
  process.stderr.write(`${line}\n`);
}

export function dollars(cents: number | null | undefined): string {
  if (cents === null || cents === undefined) return '-';
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}$${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

export function relativeTime(at: string | number | null | undefined, now = Date.now()): string {
  if (at === null || at === undefined) return '-';
  const t = typeof at === 'number' ? at : Date.parse(at);
  if (Number.isNaN(t)) return String(at);
  const s = Math.round((t - now) / 1000);
  const abs = Math.abs(s);
  const [n, unit] =
    abs < 60
      ? [abs, 's']
      : abs < 3600
        ? [Math.round(abs / 60), 'min']
        : abs < 86_400
          ? [Math.round(abs / 3600), 'h']
          : [Math.round(abs / 86_400), 'd'];
  if (abs < 5) return 'just now';
  return s < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

/** One cell as a person reads it: `*_cents` as dollars, `*_at` as relative time. */
export function cell(key: string, v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (key.endsWith('_cents') && typeof v === 'number') return dollars(v);
  if (key.endsWith('_at') && (typeof v === 'string' || typeof v === 'number')) return relativeTime(v);
  if (Array.isArray(v)) return v.every((x) => typeof x !== 'object') ? v.join(', ') : `${v.length} items`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** An aligned table (cli-table3, loaded only when a list is printed). */
export async function table(rows: Record<string, unknown>[], columns: string[]): Promise<string> {
  if (rows.length === 0) return dim('(none)');
  const { default: Table } = await import('cli-table3');
  const t = new Table({
    head: columns,
    style: { head: useColor() ? ['cyan'] : [], border: useColor() ? ['grey'] : [], compact: true },
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '  ',
    },
  });
  for (const r of rows) t.push(columns.map((c) => cell(c, r[c])));
  return t.toString();
}

/** Generic human form: a list under `data` becomes a table of its scalar columns, an object `key  value` lines. */
export async function describe(data: unknown): Promise<string> {
  if (data === null || data === undefined) return '';
  if (typeof data !== 'object') return String(data);
  const list = Array.isArray(data) ? data : (data as { data?: unknown }).data;
  if (Array.isArray(list)) {
    const rows = list as Record<string, unknown>[];
    const first = rows[0] ?? {};
    const cols = Object.keys(first)
      .filter((k) => typeof first[k] !== 'object' || first[k] === null)
      .slice(0, 7);
    return table(rows, cols);
  }
  const o = data as Record<string, unknown>;
  const width = Math.max(...Object.keys(o).map((k) => k.length));
  return Object.entries(o)
    .map(([k, v]) => `${dim(k.padEnd(width))}  ${cell(k, v)}`)
    .join('\n');
}
