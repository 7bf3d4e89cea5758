#!/usr/bin/env bash
# Times the layout JSON importer and the verifier on a model-scale layout
# (make_layout_json.py; its options pass through, e.g. --layers 4).
#   RESHARD_BUILD=build bench/import_bench.sh [make_layout_json.py options]
# Prints wall seconds and peak RSS of each step.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/bench/common.sh"

measure "generate JSON" python3 "$root/bench/make_layout_json.py" \
  --out "$tmp/layout.json" "$@"
echo "layout: $(wc -c <"$tmp/layout.json") bytes, $(grep -c '"name"' "$tmp/layout.json") tensors"
measure "reshard-translate (import)" "$build/bin/reshard-translate" \
  --import-layout-json "$tmp/layout.json" -o "$tmp/layout.mlir"
echo "module: $(wc -c <"$tmp/layout.mlir") bytes"
measure "reshard-opt (verify+print)" "$build/bin/reshard-opt" \
  "$tmp/layout.mlir" -o /dev/null
