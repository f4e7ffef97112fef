/**
 * The layering rule of docs/architecture.md, checked on every import in the tree:
 * core/ imports only core/ and packages; the gateway and the CLI import only core/ (never control/); the MCP
 * process may also import control services; the control plane never imports a surface process.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/processes.js';

/** For each top-level folder: the top-level folders its relative imports may reach (packages are always allowed). */
const ALLOWED: Record<string, readonly string[]> = {
  core: ['core'],
  gateway: ['gateway', 'core'],
  cli: ['cli', 'core'],
  mcp: ['mcp', 'control', 'core'],
  // demo/ holds the demo listing's OpenAPI document and prices, which the control plane seeds.
  control: ['control', 'core', 'demo'],
};

function sourceFiles(dir: string): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return []; // a folder another branch has not created yet
  }
  return entries.flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'fixtures' ? [] : sourceFiles(p);
    return /\.(ts|tsx|mts)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every module specifier of a file: static imports, re-exports, `import type`, dynamic `import()`. */
function importsOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName);
}

function violations(folder: string): string[] {
  const out: string[] = [];
  for (const file of sourceFiles(join(ROOT, folder))) {
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.') && !spec.startsWith('/')) continue; // a package or node: builtin
      const target = relative(ROOT, resolve(dirname(file), spec));
      const top = target.split(/[\\/]/)[0]!;
      if (target.startsWith('..') || !ALLOWED[folder]!.includes(top)) {
        out.push(`${relative(ROOT, file)} imports ${spec} (${top}/ is not allowed from ${folder}/)`);
      }
    }
  }
  return out;
}

/**
 * Places that load better-sqlite3 as a value (not only its types): `import X from 'better-sqlite3'` without `type`,
 * `require(...)` or a dynamic `import(...)` of it. A type position (`import('better-sqlite3').Database`) is fine.
 */
function sqliteValueLoads(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const isPkg = (n: ts.Node | undefined) =>
    n !== undefined && ts.isStringLiteral(n) && (n.text === 'better-sqlite3' || n.text.startsWith('better-sqlite3/'));
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) && isPkg(n.moduleSpecifier) && !n.importClause?.isTypeOnly) out.push(n.getText());
    if (
      ts.isCallExpression(n) &&
      (n.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(n.expression) && n.expression.text === 'require')) &&
      isPkg(n.arguments[0])
    )
      out.push(n.getText());
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe('import rule', () => {
  // core/db/sqlite-driver.ts picks the SQLite build for this Node (13 on Node-API 10, else 12); a module that loaded
  // 'better-sqlite3' itself would load 12 beside it, which aborts on Node 24.19+ (nodejs/node#65446) and whose
  // SqliteError is another class. Found the hard way: mcp/principal-cache.ts did, and `npm start` failed on Node 24.
  it('loads better-sqlite3 only in core/db/sqlite-driver.ts; everything else takes Sqlite from there', () => {
    const found: string[] = [];
    for (const folder of [...Object.keys(ALLOWED), 'scripts', 'bench', 'test', 'web', 'demo']) {
      for (const file of sourceFiles(join(ROOT, folder))) {
        if (relative(ROOT, file) === join('core', 'db', 'sqlite-driver.ts')) continue;
        for (const hit of sqliteValueLoads(file, readFileSync(file, 'utf8')))
          found.push(`${relative(ROOT, file)}: ${hit}`);
      }
    }
    expect(found).toEqual([]);
    expect(
      sqliteValueLoads(
        'x.ts',
        [
          "import Sqlite from 'better-sqlite3';",
          "import type Types from 'better-sqlite3';",
          "const a = require('better-sqlite3');",
          "const b = await import('better-sqlite3');",
          "let c: import('better-sqlite3').Database;",
        ].join('\n'),
      ),
    ).toEqual(["import Sqlite from 'better-sqlite3';", "require('better-sqlite3')", "import('better-sqlite3')"]);
  });

  it.each(Object.keys(ALLOWED))('%s/ imports only what the layering allows', (folder) => {
    expect(violations(folder)).toEqual([]);
  });

  it('sees static, type-only, re-exported and dynamic imports', () => {
    const src = [
      "import { a } from '../control/a.js';",
      "import type { B } from '../control/b.js';",
      "export { c } from '../control/c.js';",
      "const d = await import('../control/d.js');",
      "import 'node:fs';",
    ].join('\n');
    expect(importsOf(src)).toEqual([
      '../control/a.js',
      '../control/b.js',
      '../control/c.js',
      '../control/d.js',
      'node:fs',
    ]);
  });
});
