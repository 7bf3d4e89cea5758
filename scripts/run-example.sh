#!/usr/bin/env bash
# The main job on a bundled example: builds on first use, then compiles a
# layout (default examples/tp4-to-tp2.mlir; a .json layout is imported
# first) the whole way: verify, plan (intersect, route, schedule), print the
# report, check the plan element by element, lower, and emit the C++ of both
# backends into OUT (default build/example).
#   scripts/run-example.sh [LAYOUT] [OUT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RESHARD_BUILD:-$root/build}"
input="${1:-$root/examples/tp4-to-tp2.mlir}"
out="${2:-$build/example}"

"$root/scripts/build.sh" reshard-opt reshard-translate reshard-run >/dev/null
bin="$build/bin"
mkdir -p "$out"

case "$input" in
  *.json) "$bin/reshard-translate" --import-layout-json "$input" -o "$out/layout.mlir" ;;
  *) "$bin/reshard-opt" "$input" -o "$out/layout.mlir" ;;
esac
echo "== $input: verified"
"$bin/reshard-opt" "$out/layout.mlir" --reshard-intersect --reshard-select-sources \
  --reshard-schedule --reshard-report -o "$out/planned.mlir"
echo "== planned: $out/planned.mlir"
"$bin/reshard-run" "$out/planned.mlir" --check
"$bin/reshard-opt" "$out/planned.mlir" --convert-reshard-to-runtime=plan-name=example \
  -o "$out/plan.mlir"
for backend in nccl mpi; do
  "$bin/reshard-translate" --reshard-to-cpp --backend=$backend "$out/plan.mlir" \
    -o "$out/example_$backend.cpp"
  "$bin/reshard-translate" --reshard-to-cpp --backend=$backend \
    --reshard-cpp-emit=header "$out/plan.mlir" -o "$out/example_$backend.h"
done
echo "== runtime program: $out/plan.mlir"
echo "== C++: $out/example_nccl.{cpp,h} (NCCL + CUDA), $out/example_mpi.{cpp,h} (MPI)"
