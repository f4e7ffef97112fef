/**
 * Upserts the svc entry into a JSON or JSONC file with jsonc-parser, which edits the text in place: the user's
 * other servers, comments and formatting stay as they were. A file that does not parse is refused, not replaced.
 */
import {
  applyEdits,
  findNodeAtLocation,
  format,
  modify,
  type ParseError,
  parse,
  parseTree,
  printParseErrorCode,
} from 'jsonc-parser';
import { CliFailure } from '../failure.js';

export function upsertJson(file: string, text: string | null, path: string[], value: unknown): string {
  const source = text === null || text.trim() === '' ? '{}\n' : text;
  const errors: ParseError[] = [];
  const tree = parse(source, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || tree === null || typeof tree !== 'object' || Array.isArray(tree)) {
    const why = errors[0] ? printParseErrorCode(errors[0].error) : 'not an object';
    throw new CliFailure(
      'api',
      'config_unreadable',
      `${file} does not parse (${why}); fix it first, nothing was written`,
    );
  }
  if (sameJson(_at(tree, path), value)) return source;
  const out = _insert(source, path, value);
  return out.endsWith('\n') ? out : `${out}\n`;
}

const FORMAT = { insertSpaces: true, tabSize: 2, eol: '\n' } as const;

/**
 * jsonc-parser formats whole lines around an insertion, which re-indents a neighbouring entry written on one
 * line (`"other": { "command": "z" }`). So the edit is made unformatted and only the inserted text is formatted;
 * only when the object we add to is empty (nothing on its line to disturb) is the whole line formatted.
 */
function _insert(source: string, path: string[], value: unknown): string {
  const root = parseTree(source, [], { allowTrailingComma: true, disallowComments: false });
  let parent = root;
  for (const k of path.slice(0, -1)) {
    const next = parent ? findNodeAtLocation(parent, [k]) : undefined;
    if (!next || next.type !== 'object') break;
    parent = next;
  }
  if (!parent?.children?.length) return applyEdits(source, modify(source, path, value, { formattingOptions: FORMAT }));
  let out = source;
  for (const e of modify(source, path, value, {}).sort((a, b) => b.offset - a.offset)) {
    const next = out.slice(0, e.offset) + e.content + out.slice(e.offset + e.length);
    out = applyEdits(
      next,
      format(next, { offset: e.offset, length: e.content.length }, { ...FORMAT, keepLines: false }),
    );
  }
  return out;
}

function _at(tree: unknown, path: string[]): unknown {
  let cur = tree;
  for (const k of path) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** Equal as JSON values, whatever the order of object keys. */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(_sorted(a)) === JSON.stringify(_sorted(b));
}

function _sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(_sorted);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, _sorted((v as Record<string, unknown>)[k])]),
    );
  return v;
}
