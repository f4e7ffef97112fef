import { afterAll, beforeAll, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { ROOT } from '../../helpers/processes.js';

let h: ControlHarness;
beforeAll(async () => {
  h = await startControl();
});
afterAll(() => h.stop());

it('docs/api.md lists every route of the OpenAPI document, and nothing that is not there', async () => {
  const doc = (await call(h.control.url, 'GET', '/v1/openapi.json')).body as {
    paths: Record<string, Record<string, unknown>>;
  };
  const served = Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
  );
  const md = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
  const documented = [...md.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \|/gm)].map(
    (m) => `${m[1]} ${m[2]}`,
  );
  expect(documented.sort()).toEqual(served.sort());
});
