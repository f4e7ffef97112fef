/**
 * Owns stdout and stderr: one JSON document with `--json` (`{ ok: true, data }` or `{ ok: false, error }`), human
 * lines otherwise. Colors only on a TTY and never with NO_COLOR; money as dollars and cents, times readable.
 * Human views never hide data: nested objects are indented sections, lists of objects are tables, and every table
 * fits the terminal width (at least 80 columns) by wrapping its widest columns, never by cutting the line.
 */
import type { CliFailure } from './failure.js';
import { isJsonObject } from '../core/json-object.js';

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

/** The width human output must fit: the terminal's, else $COLUMNS, never below 80. */
export function termWidth(): number {
  const cols = process.stdout.columns || Number(process.env.COLUMNS) || 80;
  return Math.max(80, cols);
}

const paint = (code: number, stream?: NodeJS.WriteStream) => (s: string) =>
  useColor(stream) ? `\u001B[${code}m${s}\u001B[39m` : s;
export const red = paint(31, process.stderr);
export const dim = (s: string) => (useColor() ? `\u001B[2m${s}\u001B[22m` : s);

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
    const error = {
      code: f.code,
      status: f.status,
      message: f.message,
      next: f.next,
      ...(f.requestId ? { request_id: f.requestId } : {}),
    };
    const data = f.data === undefined ? {} : { data: f.data };
    process.stdout.write(`${JSON.stringify({ ok: false, error, ...data })}\n`);
    return;
  }
  // A person sees the message, the stable code and the command to run; HTTP statuses stay in --json.
  process.stderr.write(`${red('error')}: ${f.message}${f.kind === 'api' ? ` (${f.code})` : ''}\n`);
  if (f.requestId) process.stderr.write(`request id: ${f.requestId}\n`);
  if (f.next) process.stderr.write(`next: ${f.next}\n`);
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

/** `1 call`, `2 calls`; `plural(1, 'entry', 'entries')`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
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

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
/** An ISO instant as a person reads it: `2026-11-27 09:12 UTC`. */
export function readableTime(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A field name as a column header or label: `price_cents` shows dollars, so it is headed `price`. */
export function label(key: string): string {
  return key.endsWith('_cents') ? key.slice(0, -'_cents'.length) : key;
}

/** One value as a person reads it: `*_cents` as dollars, `*_at` as relative time, other ISO instants readable. */
export function cell(key: string, v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (key.endsWith('_cents') && typeof v === 'number') return dollars(v);
  if (key.endsWith('_at') && (typeof v === 'string' || typeof v === 'number')) return relativeTime(v);
  if (typeof v === 'string' && ISO_TIME.test(v)) return readableTime(v);
  if (Array.isArray(v)) return v.every((x) => typeof x !== 'object' || x === null) ? v.join(', ') : compactJson(v);
  if (typeof v === 'object') return compactJson(v);
  return String(v);
}

function compactJson(v: unknown): string {
  return JSON.stringify(v, null, 1).replace(/\n\s*/g, ' ');
}

/** Wraps one cell's text to `width` columns: at spaces where it can, inside a long word where it must. */
export function wrap(text: string, width: number): string {
  const out: string[] = [];
  for (const para of text.split('\n')) {
    // A line that fits is kept as it is (indentation included).
    if (para.length <= width) {
      out.push(para);
      continue;
    }
    let line = '';
    for (const word of para.split(' ')) {
      let w = word;
      while (w.length > width) {
        if (line) out.push(line);
        line = '';
        out.push(w.slice(0, width));
        w = w.slice(width);
      }
      if (!line) line = w;
      else if (line.length + 1 + w.length <= width) line += ` ${w}`;
      else {
        out.push(line);
        line = w;
      }
    }
    out.push(line);
  }
  return out.join('\n');
}

const PAD = 0; // no padding inside a cell: the 'middle' separator is the only space between columns
const GAP = 2; // the 'middle' separator

/**
 * Column widths that fit `total` columns. Columns of text (`prose`: cells with spaces, which wrap at words) give way
 * first, down to 12; then the widest of all, down to 6. Ids and paths stay whole while prose can wrap.
 */
export function fitWidths(natural: number[], total: number, prose: boolean[] = []): number[] {
  const widths = [...natural];
  const budget = total - widths.length * 2 * PAD - (widths.length - 1) * GAP;
  let sum = widths.reduce((a, b) => a + b, 0);
  for (const [floor, may] of [
    [12, (i: number) => prose[i] === true],
    [6, () => true],
  ] as const) {
    while (sum > budget) {
      const candidates = widths.map((w, i) => (may(i) && w > floor ? w : -1));
      const max = Math.max(...candidates);
      if (max < 0) break;
      const i = candidates.indexOf(max);
      const second = Math.max(floor, ...candidates.filter((_, j) => j !== i));
      const cut = Math.min(max - second, sum - budget) || 1;
      widths[i] = max - cut;
      sum -= cut;
    }
  }
  return widths;
}

/** An aligned table (cli-table3, loaded only when a list is printed) that fits the terminal width. */
export async function table(rows: Record<string, unknown>[], columns: string[], width = termWidth()): Promise<string> {
  if (rows.length === 0) return dim('(none)');
  const body = rows.map((r) => columns.map((c) => cell(c, valueAt(r, c))));
  const heads = columns.map(label);
  const natural = heads.map((h, i) =>
    Math.max(h.length, ...body.map((r) => Math.max(...(r[i] ?? '').split('\n').map((l) => l.length)))),
  );
  const prose = columns.map((_, i) => body.some((r) => (r[i] ?? '').includes(' ')));
  const widths = fitWidths(natural, width, prose);
  const { default: Table } = await import('cli-table3');
  const t = new Table({
    head: heads.map((h, i) => wrap(h, widths[i] ?? h.length)),
    style: {
      head: useColor() ? ['cyan'] : [],
      border: useColor() ? ['grey'] : [],
      compact: true,
      'padding-left': PAD,
      'padding-right': PAD,
    },
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
      middle: ' '.repeat(GAP),
    },
  });
  for (const r of body) t.push(r.map((c, i) => wrap(c, widths[i] ?? c.length)));
  return t.toString();
}

/** `a.b` reads a nested field (a table column of a flattened object). */
function valueAt(row: Record<string, unknown>, column: string): unknown {
  if (column in row) return row[column];
  let v: unknown = row;
  for (const part of column.split('.'))
    v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

const isScalar = (v: unknown) => v === null || typeof v !== 'object';

/** The columns of a list of objects: every field of any row, a nested object's fields one level down as `a.b`. */
export function columnsOf(rows: Record<string, unknown>[]): string[] {
  const cols: string[] = [];
  const add = (c: string) => {
    if (!cols.includes(c)) cols.push(c);
  };
  for (const r of rows)
    for (const [k, v] of Object.entries(r)) {
      if (isJsonObject(v) && Object.values(v).every((x) => isScalar(x) || Array.isArray(x)))
        for (const sub of Object.keys(v)) add(`${k}.${sub}`);
      else add(k);
    }
  // A column that is empty in every row says nothing.
  return cols.filter((c) => rows.some((r) => valueAt(r, c) !== null && valueAt(r, c) !== undefined));
}

/**
 * Generic human form of any answer: scalars as `key  value` lines, nested objects as indented sections, lists of
 * objects as tables (headed with their count), so no field is summarized away.
 */
export async function describe(data: unknown, indent = ''): Promise<string> {
  if (data === null || data === undefined) return '';
  if (typeof data !== 'object') return `${indent}${String(data)}`;
  if (Array.isArray(data)) return indentBlock(await listBlock(data, termWidth() - indent.length), indent);
  const o = data as Record<string, unknown>;
  const flat = Object.entries(o).filter(([, v]) => !isNested(v));
  const nested = Object.entries(o).filter(([, v]) => isNested(v));
  const width = Math.max(0, ...flat.map(([k]) => label(k).length));
  const valueWidth = Math.max(20, termWidth() - indent.length - width - 2);
  const lines = flat.map(([k, v]) => {
    const [first, ...more] = wrap(cell(k, v), valueWidth).split('\n');
    const pad = ' '.repeat(indent.length + width + 2);
    return [`${indent}${dim(label(k).padEnd(width))}  ${first}`, ...more.map((m) => pad + m)].join('\n');
  });
  for (const [k, v] of nested) {
    if (Array.isArray(v))
      lines.push(
        `${indent}${label(k)} (${v.length})`,
        indentBlock(await listBlock(v, termWidth() - indent.length - 2), `${indent}  `),
      );
    else lines.push(`${indent}${label(k)}`, await describe(v, `${indent}  `));
  }
  return lines.filter((l) => l !== '').join('\n');
}

/** A value that gets its own section: an object, or a list that is not all scalars. */
function isNested(v: unknown): boolean {
  if (Array.isArray(v)) return v.some((x) => !isScalar(x));
  return isJsonObject(v) && Object.keys(v).length > 0;
}

async function listBlock(list: unknown[], width: number): Promise<string> {
  if (list.every(isJsonObject)) return table(list, columnsOf(list), width);
  return list.map((x) => (isScalar(x) ? String(x) : compactJson(x))).join('\n');
}

function indentBlock(text: string, indent: string): string {
  if (!indent) return text;
  return text
    .split('\n')
    .map((l) => indent + l)
    .join('\n');
}
