/**
 * Upserts the svc entry into a JSON or JSONC file with jsonc-parser, which edits the text in place: the user's
 * other servers, comments and formatting stay as they were. A file that does not parse is refused, not replaced.
 */
import { applyEdits, modify, parse, type ParseError, printParseErrorCode } from 'jsonc-parser';
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
  if (_deepEqual(_at(tree, path), value)) return source;
  const edits = modify(source, path, value, { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } });
  const out = applyEdits(source, edits);
  return out.endsWith('\n') ? out : `${out}\n`;
}

function _at(tree: unknown, path: string[]): unknown {
  let cur = tree;
  for (const k of path) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

function _deepEqual(a: unknown, b: unknown): boolean {
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
