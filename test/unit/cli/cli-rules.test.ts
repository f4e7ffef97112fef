import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { ArgsDef } from 'citty';
import { describe, expect, it } from 'vitest';
import { parseStrict } from '../../../cli/args.js';
import { upsertToml } from '../../../cli/connect/edit-toml.js';
import { upsertRules } from '../../../cli/connect/rules.js';
import { dollars } from '../../../cli/output.js';
import { VERSION } from '../../../cli/version.js';
import { nextCommand } from '../../../cli/next-step.js';
import { failureFrom } from '../../../cli/client.js';
import { NextStepSchema } from '../../../core/next-step.js';
import { ROOT } from '../../helpers/processes.js';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the CLI package', () => {
  it('imports only shared code and packages, never control/, gateway/ or mcp/ (it could ship on its own)', () => {
    const offenders = files(join(ROOT, 'cli')).flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/from '(\.\.\/[^']+)'/g)]
        .map((m) => join(f, '..', m[1]!))
        .filter((target) => !relative(ROOT, target).startsWith('cli') && !relative(ROOT, target).startsWith('core'))
        .map((target) => `${relative(ROOT, f)} -> ${relative(ROOT, target)}`),
    );
    expect(offenders).toEqual([]);
  });

  it('reports the version in package.json', () => {
    expect(VERSION).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });
});

describe('strict argument parsing', () => {
  const def: ArgsDef = {
    slug: { type: 'positional' },
    query: { type: 'string' },
    quote: { type: 'boolean' },
    sort: { type: 'enum', options: ['price', 'newest'] },
  };
  it.each([
    [['s', '--qurey', 'x'], /Unknown option '--qurey'/],
    [[], /missing argument <slug>/],
    [['s', 'extra'], /unexpected argument 'extra'/],
    [['s', '--query'], /argument missing/],
    [['s', '--sort', 'cheapest'], /--sort must be one of price, newest/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseStrict(argv, def, [])).toThrow(message);
  });
  it('collects repeated flags declared multiple', () => {
    expect(parseStrict(['s', '--query', 'a=1', '--query', 'b=2'], def, ['query']).query).toEqual(['a=1', 'b=2']);
  });
});

describe('text edits', () => {
  it('replaces the svc TOML table in place and keeps every other line', () => {
    const src = '# top\n[mcp_servers.svc]\nurl = "old"\n\n[other]\nx = 1 # keep\n';
    expect(upsertToml(src, 'svc', { url: 'new' })).toBe(
      '# top\n[mcp_servers.svc]\nurl = "new"\n\n[other]\nx = 1 # keep\n',
    );
  });
  it('replaces the AGENTS.md section between its markers', () => {
    const once = upsertRules('# Mine\n', '<!-- svc:begin x -->\nold\n<!-- svc:end -->');
    const twice = upsertRules(once, '<!-- svc:begin x -->\nnew\n<!-- svc:end -->');
    expect(twice).toBe('# Mine\n\n<!-- svc:begin x -->\nnew\n<!-- svc:end -->\n');
  });
  it.each([
    [0, '$0.00'],
    [5, '$0.05'],
    [1234, '$12.34'],
    [-250, '-$2.50'],
  ])('shows %i cents as %s', (c, s) => expect(dollars(c)).toBe(s));
});

describe('next steps', () => {
  it("words every action the server can send as a command (the CLI's keys are core's action names)", () => {
    for (const option of NextStepSchema.options) {
      const action = option.shape.action.value;
      const next = { action, slug: 'demo-weather', cap: 'budget' };
      expect(nextCommand('some_code', NextStepSchema.parse(next)), action).toMatch(/^svc /);
    }
    // The server's step wins over the code's own command.
    expect(nextCommand('insufficient_credits', { action: 'verify_email' }, { email: 'a@x.test' })).toMatch(
      /^svc verify --email a@x.test/,
    );
    const failure = failureFrom(
      401,
      JSON.stringify({ code: 'session_required', detail: 'A session is needed.', next: { action: 'log_in' } }),
      true,
      { email: 'a@example.test' },
    );
    expect(failure.next).toBe('svc login --email a@example.test');
  });
});
