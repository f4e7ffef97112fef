#!/usr/bin/env bash
# Proves the native uWS build on Node 24 where it can load: builds a Debian 13 (trixie, glibc 2.41) userland with
# debootstrap, copies into it Node 24 and a tree of this checkout whose better-sqlite3 is built for Node 24
# (.ci/make-tree.sh), checks that the gateway picks @btc-vision/uwebsockets.js there (npm run doctor), and runs the
# gateway's integration tests inside it, expecting the native server. Needs root, debootstrap and Debian's mirror.
# Usage: scripts/debian13-native.sh [ROOTFS_DIR]   (default /var/tmp/svc-debian13; reused when already built)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rootfs=${1:-/var/tmp/svc-debian13}
node24=$root/.ci/nodes/node_modules/node24
[ -x "$node24/bin/node" ] || npm ci --prefix .ci/nodes --no-audit --no-fund --loglevel=error
[ -f dist/gateway/main.js ] || npm run build
if [ ! -x "$rootfs/usr/bin/apt-get" ]; then
  debootstrap --variant=minbase trixie "$rootfs" http://deb.debian.org/debian
fi
# debootstrap writes no /etc/hosts (an installer does); without one `localhost` does not resolve in the userland.
# svc and its tests use 127.0.0.1, so this only makes the userland behave like an installed system.
[ -s "$rootfs/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
echo "userland: $(chroot "$rootfs" ldd --version | head -1)"
# The Node 24 tree (.ci/run's, reused when its SQLite build loads), bind-mounted into the userland as /svc.
tree=$root/.ci/node24-tree
if ! (cd "$tree" 2>/dev/null && "$node24/bin/node" --input-type=module -e "await import('./dist/core/db/sqlite-driver.js')") 2>/dev/null; then
  .ci/make-tree.sh "$node24" "$tree"
fi
rm -rf "$rootfs/opt/node24"
mkdir -p "$rootfs/opt" "$rootfs/svc" && cp -a "$node24" "$rootfs/opt/node24"
mountpoint -q "$rootfs/proc" || mount -t proc proc "$rootfs/proc"
mountpoint -q "$rootfs/dev" || mount --bind /dev "$rootfs/dev"
mountpoint -q "$rootfs/svc" || mount --bind "$tree" "$rootfs/svc"
trap 'umount "$rootfs/svc" "$rootfs/proc" "$rootfs/dev" 2>/dev/null || true' EXIT
trap 'exit 1' INT TERM
inside() { chroot "$rootfs" /usr/bin/env -i HOME=/root PATH=/opt/node24/bin:/usr/bin:/bin TMPDIR=/tmp "$@"; }
inside sh -c 'cd /svc && node dist/scripts/doctor.js'
inside sh -c 'cd /svc && SVC_TEST_SKIP_BUILD=1 SVC_TEST_EXPECT_SERVER=native SVC_GATEWAY_SERVER=native node node_modules/vitest/vitest.mjs run test/integration/gateway'
