#!/usr/bin/env bash
# Times the intersection analysis on a model-scale MoE refit layout
# (make_layout_json.py: DeepSeek-V3-like, 256 trainer ranks [dp 4, ep 8,
# tp 8] -> 64 inference ranks; its options pass through, e.g. --layers 4).
#   RESHARD_BUILD=build bench/intersect_bench.sh [make_layout_json.py options]
# Prints wall seconds and peak RSS of each step, the time of the pass alone
# (MLIR's -mlir-timing), and the number of pieces.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/bench/common.sh"

python3 "$root/bench/make_layout_json.py" --out "$tmp/layout.json" "$@" 2>/dev/null
"$build/bin/reshard-translate" --import-layout-json "$tmp/layout.json" -o "$tmp/layout.mlir"
echo "layout: $(grep -c '^  reshard.redistribute' "$tmp/layout.mlir") tensors," \
     "$(grep -c '^  reshard.mesh' "$tmp/layout.mlir") meshes"

# Baseline in the same invocation: parse, verify and print without the pass.
measure "reshard-opt (no pass)" "$build/bin/reshard-opt" "$tmp/layout.mlir" -o /dev/null
measure "reshard-opt --reshard-intersect" "$build/bin/reshard-opt" "$tmp/layout.mlir" \
  --reshard-intersect -o "$tmp/pieces.mlir"
"$build/bin/reshard-opt" "$tmp/layout.mlir" --reshard-intersect -mlir-timing \
  -o /dev/null 2>&1 | grep -E 'ReshardIntersect|Parser|Output|Total' | sed 's/^ */  timing: /'
echo "pieces: $(grep -c ' box ' "$tmp/pieces.mlir")," \
     "local copies: $(grep ' box ' "$tmp/pieces.mlir" | awk '{ if ($0 ~ /from ([0-9]+) at .* to \1 at/) n++ } END { print n + 0 }')," \
     "text: $(wc -c <"$tmp/pieces.mlir") bytes"
