import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A control-plane worker thread's compiled script, `script` relative to `control/` (`catalog/import-worker.js`):
 * beside this module when it runs compiled, else the build in dist/ (tests that run from TypeScript sources).
 */
export function workerScript(script: string): URL {
  const here = new URL(`../${script}`, import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  return new URL(`../../dist/control/${script}`, import.meta.url);
}
