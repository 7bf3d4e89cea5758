#!/usr/bin/env bash
# The main job on a bundled example: builds on first use, then verifies and
# prints a layout file (default: examples/tp4-to-tp2.mlir; a .json layout is
# imported first).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RESHARD_BUILD:-$root/build}"
input="${1:-$root/examples/tp4-to-tp2.mlir}"

"$root/scripts/build.sh" reshard-opt reshard-translate >/dev/null

case "$input" in
  *.json) "$build/bin/reshard-translate" --import-layout-json "$input" |
            "$build/bin/reshard-opt" ;;
  *) "$build/bin/reshard-opt" "$input" ;;
esac
