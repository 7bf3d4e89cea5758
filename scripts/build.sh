#!/usr/bin/env bash
# Configures (once) and builds reshard into $RESHARD_BUILD (default: build/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RESHARD_BUILD:-$root/build}"

"$root/scripts/setup.sh"

source "$root/scripts/lib/configure.sh"
reshard_configure "$build" -DCMAKE_BUILD_TYPE="${RESHARD_BUILD_TYPE:-Release}"
ninja -C "$build" -j "${RESHARD_JOBS:-$(nproc)}" "$@"
