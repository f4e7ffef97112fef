/** Integration tests spawn the compiled processes from dist/: build once before any test runs. */
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  if (process.env.SVC_TEST_SKIP_BUILD === '1') return;
  try {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'pipe' });
  } catch (e) {
    // Type errors still emit JS; the typecheck gate is `npm test`'s own tsc run.
    const out = (e as { stdout?: Buffer }).stdout?.toString() ?? '';
    if (!out.includes('error TS')) throw e;
  }
}
