/**
 * Services own authorization (docs/architecture.md, "Who may do what"). Walks every exported function of every
 * control/<domain>/*.service.ts and fails on one that
 * - takes a principal (a parameter typed `Principal`) but never calls an assert* guard of control/auth/principal.ts;
 * - takes no principal and is not declared `@public` (anyone may call it: a public read, a serialiser, an entry point
 *   whose credential is its input, like a login code) or `@internal` (a building block of other services, jobs or
 *   the operator CLI), each with a reason;
 * and fails when a surface (REST route, page, MCP tool, CLI command) imports an `@internal` service function or checks
 * a scope or role itself.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const GUARDS = /\bassert(Scope|Session|OrgAdmin|Authenticated|PublicRead|Person)\(/;

interface ServiceFunction {
  file: string;
  name: string;
  takesPrincipal: boolean;
  callsGuard: boolean;
  access: 'public' | 'internal' | null;
  reason: string;
}

function walk(dir: string, keep: (path: string) => boolean, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, keep, out);
    else if (keep(path)) out.push(path);
  }
  return out;
}

function serviceFiles(): string[] {
  return walk(join(ROOT, 'control'), (p) => p.endsWith('.service.ts')).sort();
}

function accessTag(node: ts.Node): { access: 'public' | 'internal' | null; reason: string } {
  for (const tag of ts.getJSDocTags(node)) {
    const name = tag.tagName.text;
    if (name === 'public' || name === 'internal') {
      const reason = typeof tag.comment === 'string' ? tag.comment : (ts.getTextOfJSDocComment(tag.comment) ?? '');
      return { access: name, reason: reason.trim() };
    }
  }
  return { access: null, reason: '' };
}

function exportedFunctions(path: string): ServiceFunction[] {
  const text = readFileSync(path, 'utf8');
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const file = relative(ROOT, path);
  const out: ServiceFunction[] = [];
  const exported = (n: ts.Node) =>
    ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const describe = (
    name: string,
    tagged: ts.Node,
    fn: ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression,
  ) => {
    const takesPrincipal = fn.parameters.some((p) => p.type !== undefined && /\bPrincipal\b/.test(p.type.getText(sf)));
    out.push({
      file,
      name,
      takesPrincipal,
      callsGuard: fn.body !== undefined && GUARDS.test(fn.body.getText(sf)),
      ...accessTag(tagged),
    });
  };
  for (const st of sf.statements) {
    if (!exported(st)) continue;
    if (ts.isFunctionDeclaration(st) && st.name) describe(st.name.text, st, st);
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        const init = d.initializer;
        if (ts.isIdentifier(d.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)))
          describe(d.name.text, st, init);
      }
    }
  }
  return out;
}

const all = serviceFiles().flatMap(exportedFunctions);

/** Files that adapt a surface: they pass the principal on and never decide who may do what. */
function surfaceFiles(): string[] {
  // The test-payments pages are not a person's surface: they play the card processor in development
  // (docs/billing.md) and apply its events, as the Stripe webhook does.
  const control = walk(
    join(ROOT, 'control'),
    (p) => /\.routes\.ts$/.test(p) || (/control\/web\/.*\.tsx?$/.test(p) && !p.endsWith('test-payments.tsx')),
  );
  const mcpTools = walk(join(ROOT, 'mcp', 'tools'), (p) => p.endsWith('.ts'));
  const cli = walk(join(ROOT, 'cli'), (p) => p.endsWith('.ts'));
  return [...control, ...mcpTools, ...cli];
}

describe('services own authorization', () => {
  it('finds the service functions (the walk itself works)', () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all.find((f) => f.name === 'acceptTerms')).toMatchObject({ takesPrincipal: true, callsGuard: true });
    expect(all.find((f) => f.name === 'searchCatalog')).toMatchObject({ takesPrincipal: true, callsGuard: true });
  });

  it('every exported service function takes a principal and checks it, or says why it needs none', () => {
    const bad = all.flatMap((f) => {
      if (f.takesPrincipal && !f.callsGuard)
        return [`${f.file} ${f.name}: takes a principal but calls no assert* guard`];
      if (!f.takesPrincipal && f.access === null)
        return [`${f.file} ${f.name}: takes no principal and is not declared @public or @internal`];
      if (f.access !== null && f.reason.length < 10) return [`${f.file} ${f.name}: @${f.access} without a reason`];
      return [];
    });
    expect(bad).toEqual([]);
  });

  it('no surface imports an @internal service function', () => {
    const internal = new Map<string, Set<string>>();
    for (const f of all.filter((x) => x.access === 'internal')) {
      const module = f.file.replace(/\.ts$/, '.js');
      internal.set(module, (internal.get(module) ?? new Set()).add(f.name));
    }
    const bad: string[] = [];
    for (const path of surfaceFiles()) {
      const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
      for (const st of sf.statements) {
        if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
        const target = relative(ROOT, join(path, '..', st.moduleSpecifier.text));
        const names = internal.get(target);
        const bindings = st.importClause?.namedBindings;
        if (!names || !bindings || !ts.isNamedImports(bindings)) continue;
        for (const el of bindings.elements)
          if (names.has((el.propertyName ?? el.name).text)) bad.push(`${relative(ROOT, path)} imports ${el.name.text}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('no route, page, MCP tool or CLI command checks a scope or role itself', () => {
    const checks =
      /\b(requireScope|requireSession|requireOrgAdminSession|requireAuth|assertScope|assertSession|assertOrgAdmin)\(|\.role\s*[!=]==|\.scopes\.has\(/;
    const bad = surfaceFiles()
      .filter((p) => checks.test(readFileSync(p, 'utf8')))
      .map((p) => relative(ROOT, p));
    expect(bad).toEqual([]);
  });
});

/**
 * docs/architecture.md's worked example quotes the real files. Each ```ts / ```tsx block there starts with
 * `// <path>`; every other line of it (but `// …`, which marks lines left out) must be a line of that file, in the
 * same order. A rename or a changed signature fails here until the example is rewritten from the code.
 */
describe('docs/architecture.md: the worked example quotes the real files', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const from = doc.indexOf('## Worked example');
  const section = doc.slice(from, doc.indexOf('\n## ', from + 1));
  const quotes = [...section.matchAll(/```tsx?\n([\s\S]*?)```/g)].map((m) => {
    const lines = m[1]!
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    return { file: /^\/\/ (\S+)$/.exec(lines[0] ?? '')?.[1] ?? '', lines: lines.slice(1) };
  });

  it('quotes one operation on every layer: schema, service, REST route, MCP tool, CLI command, page', () => {
    expect(quotes.map((q) => q.file)).toEqual([
      expect.stringMatching(/^core\/schemas\/.+\.schemas\.ts$/),
      expect.stringMatching(/^control\/.+\.service\.ts$/),
      expect.stringMatching(/^control\/.+\.routes\.ts$/),
      expect.stringMatching(/^mcp\/tools\/.+\.ts$/),
      expect.stringMatching(/^cli\/commands\/.+\.ts$/),
      expect.stringMatching(/^control\/web\/.+\.tsx$/),
    ]);
  });

  it('every quoted line is in its file, in the quoted order', () => {
    const missing: string[] = [];
    for (const q of quotes) {
      const file = readFileSync(join(ROOT, q.file), 'utf8')
        .split('\n')
        .map((l) => l.trim());
      let at = 0;
      for (const line of q.lines) {
        if (line === '// …') continue;
        const found = file.indexOf(line, at);
        if (found < 0) missing.push(`${q.file}: ${line}`);
        else at = found + 1;
      }
    }
    expect(missing).toEqual([]);
  });

  it("the quoted service function is one this test's walk accepts: it takes the principal and asserts", () => {
    const service = quotes[1]!;
    const name = /^export async function (\w+)\(/.exec(service.lines[0] ?? '')?.[1];
    expect(all.find((f) => f.file === service.file && f.name === name)).toMatchObject({
      takesPrincipal: true,
      callsGuard: true,
    });
  });
});
