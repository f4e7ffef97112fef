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

describe('import rule', () => {
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
