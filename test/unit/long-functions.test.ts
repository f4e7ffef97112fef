/**
 * No shipped function over 80 lines without a comment saying why (issue 22; docs/architecture.md, "Long
 * functions"). Walks every function, method, constructor, accessor and arrow function of the shipped code (core/,
 * control/, gateway/, mcp/, cli/, scripts/, demo/; not test/ or bench/) and fails on one longer than 80 lines whose
 * leading comments (on the function, or on the declaration, property or statement that holds it) carry no
 * `Long: <reason>` marker.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SHIPPED = ['core', 'control', 'gateway', 'mcp', 'cli', 'scripts', 'demo'];
const MAX_LINES = 80;
/** The marker: `Long:` and a reason of at least a few words, in a leading `//` or block comment. */
const MARKER = /\bLong:\s*\S.{9,}/;

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'node_modules' && name !== 'fixtures') walk(path, out);
    } else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.FunctionExpression
  | ts.ArrowFunction
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration;

function isFunction(n: ts.Node): n is FunctionNode {
  return (
    ts.isFunctionDeclaration(n) ||
    ts.isFunctionExpression(n) ||
    ts.isArrowFunction(n) ||
    ts.isMethodDeclaration(n) ||
    ts.isConstructorDeclaration(n) ||
    ts.isGetAccessorDeclaration(n) ||
    ts.isSetAccessorDeclaration(n)
  );
}

/** A node where a comment about what it holds would be written: a statement, a class member, an object property. */
function isHolder(n: ts.Node): boolean {
  const p = n.parent;
  return (
    ts.isSourceFile(p) ||
    ts.isBlock(p) ||
    ts.isModuleBlock(p) ||
    ts.isCaseClause(p) ||
    ts.isClassElement(n) ||
    ts.isPropertyAssignment(n)
  );
}

/** The leading comments of the function and of each node up to (and including) the one that holds it. */
function leadingComments(sf: ts.SourceFile, fn: ts.Node): string[] {
  const text = sf.getFullText();
  const out: string[] = [];
  for (let n: ts.Node = fn; !ts.isSourceFile(n); n = n.parent) {
    for (const r of ts.getLeadingCommentRanges(text, n.getFullStart()) ?? []) out.push(text.slice(r.pos, r.end));
    if (isHolder(n)) break;
  }
  return out;
}

function nameOf(sf: ts.SourceFile, fn: FunctionNode): string {
  if (fn.name) return fn.name.getText(sf);
  if (ts.isConstructorDeclaration(fn)) return 'constructor';
  const p = fn.parent;
  if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p)) && p.name) return p.name.getText(sf);
  if (ts.isCallExpression(p)) return `${p.expression.getText(sf).slice(0, 40)}(…) callback`;
  return '(anonymous)';
}

interface LongFunction {
  where: string;
  lines: number;
  marked: boolean;
}

function longFunctions(): LongFunction[] {
  const files = SHIPPED.flatMap((d) => walk(join(ROOT, d)));
  const out: LongFunction[] = [];
  for (const path of files) {
    const file = relative(ROOT, path).split('\\').join('/');
    const kind = path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
    const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true, kind);
    const visit = (n: ts.Node) => {
      if (isFunction(n) && n.body) {
        const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
        const last = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
        const lines = last - first + 1;
        if (lines > MAX_LINES)
          out.push({
            where: `${file}:${first + 1} ${nameOf(sf, n)}`,
            lines,
            marked: leadingComments(sf, n).some((c) => MARKER.test(c)),
          });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}

describe(`no shipped function over ${MAX_LINES} lines without a comment saying why`, () => {
  const found = longFunctions();

  it('finds long functions at all (the walk works): a marked one is reported as marked', () => {
    expect(found.length).toBeGreaterThan(0);
    expect(found.some((f) => f.marked)).toBe(true);
  });

  it(`every function over ${MAX_LINES} lines carries a "Long: <reason>" comment`, () => {
    expect(found.filter((f) => !f.marked).map((f) => `${f.where} (${f.lines} lines)`)).toEqual([]);
  });
});
