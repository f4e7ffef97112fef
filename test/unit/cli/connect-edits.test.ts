/** The text edits behind `svc connect`: what they keep of the person's file, what they refuse, what backups keep. */
import { describe, expect, it } from 'vitest';
import { scrubbed } from '../../../cli/connect/apply.js';
import { upsertJson } from '../../../cli/connect/edit-json.js';
import { upsertYaml } from '../../../cli/connect/edit-yaml.js';
import { CliFailure } from '../../../cli/failure.js';

const entry = { type: 'http', url: 'http://127.0.0.1:4002/mcp' };

describe('upsertJson', () => {
  it('adds beside a one-line neighbour without re-indenting it, and formats only the new entry', () => {
    const src = '{\n  "mcpServers": {\n    "other": { "command": "z" }\n  }\n}\n';
    expect(upsertJson('f', src, ['mcpServers', 'svc'], entry)).toBe(
      '{\n  "mcpServers": {\n    "other": { "command": "z" },\n    "svc": {\n      "type": "http",\n      "url": "http://127.0.0.1:4002/mcp"\n    }\n  }\n}\n',
    );
  });

  it('fills an empty container or file with a formatted entry, and leaves an equal entry untouched', () => {
    const out = upsertJson('f', '{\n  "theme": "x",\n  "mcpServers": {}\n}\n', ['mcpServers', 'svc'], entry);
    expect(out).toContain('  "mcpServers": {\n    "svc": {\n      "type": "http",');
    expect(upsertJson('f', null, ['mcpServers', 'svc'], entry)).toBe(
      '{\n  "mcpServers": {\n    "svc": {\n      "type": "http",\n      "url": "http://127.0.0.1:4002/mcp"\n    }\n  }\n}\n',
    );
    expect(upsertJson('f', out, ['mcpServers', 'svc'], { url: entry.url, type: 'http' })).toBe(out);
  });

  it('refuses a file that does not parse', () => {
    expect(() => upsertJson('f', '{ "a": ', ['mcpServers', 'svc'], entry)).toThrow(CliFailure);
  });
});

describe('upsertYaml', () => {
  it("keeps goose's comments and other extensions, and a re-run changes nothing", () => {
    const src = '# my goose\nGOOSE_PROVIDER: openai # keep\nextensions:\n  developer:\n    enabled: true\n';
    const out = upsertYaml('f', src, ['extensions', 'svc'], { enabled: true, uri: entry.url });
    expect(out).toBe(`${src}  svc:\n    enabled: true\n    uri: ${entry.url}\n`);
    expect(upsertYaml('f', out, ['extensions', 'svc'], { uri: entry.url, enabled: true })).toBe(out);
  });

  it('refuses a file that does not parse, or is not a mapping', () => {
    expect(() => upsertYaml('f', 'a: [1,\n', ['extensions', 'svc'], {})).toThrow(CliFailure);
    expect(() => upsertYaml('f', '- a\n- b\n', ['extensions', 'svc'], {})).toThrow(CliFailure);
  });
});

describe('scrubbed (backups)', () => {
  it('blanks svc keys and tokens the new file no longer holds, and keeps the ones it still holds', () => {
    const old = `svc_live_${'o'.repeat(24)}`;
    const kept = `svc_live_${'k'.repeat(24)}`;
    const before = `{"a": "Bearer ${old}", "b": "Bearer ${kept}", "c": "svc_rt_${'r'.repeat(30)}"}`;
    const after = `{"a": "Bearer \${SVC_API_KEY}", "b": "Bearer ${kept}"}`;
    expect(scrubbed(before, after)).toBe(
      `{"a": "Bearer svc_live_REMOVED_BY_SVC_CONNECT", "b": "Bearer ${kept}", "c": "svc_rt_REMOVED_BY_SVC_CONNECT"}`,
    );
  });
});
