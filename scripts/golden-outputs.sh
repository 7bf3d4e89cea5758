#!/usr/bin/env bash
# Writes what the compiler makes of the bundled examples and the six
# benchmark scenarios (plans, reports, runtime programs, C++ and headers of
# both backends) into OUT, so that a refactoring can show its outputs are
# byte-identical:
#   scripts/golden-outputs.sh /tmp/before     # on the old commit
#   scripts/golden-outputs.sh /tmp/after      # on the new one
#   diff -r /tmp/before /tmp/after
# About 1 minute on 2 cores (the scenarios are generated once into OUT/layouts).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${RESHARD_BUILD:-$root/build}/bin"
out="${1:?usage: scripts/golden-outputs.sh OUT}"
mkdir -p "$out/layouts"
inputs=("$root/examples/tp4-to-tp2.mlir" "$root/examples/tp4-to-tp2.json"
        "$root/examples/gpu/one-rank.mlir")
for s in llama70b-dgx qwen235b-dgx deepseek-v3-dgx llama70b-gb200 qwen235b-gb200 deepseek-v3-gb200; do
  python3 "$root/bench/make_refit_scenario.py" --scenario "$s" --out "$out/layouts/$s.json" 2>/dev/null
  inputs+=("$out/layouts/$s.json")
done
for in in "${inputs[@]}"; do
  n=$(basename "$in"); n=${n%.*}-${in##*.}
  "$bin/reshard-opt" "$in" --reshard-plan-pipeline="staging-budget=268435456 lower=false" \
    -o "$out/$n.planned.mlir"
  for be in mpi nccl; do
    "$bin/reshard-compile" "$in" --backend=$be --staging-budget=256M --plan-name=refit \
      -o "$out/$n.$be.cpp" --header="$out/$n.$be.h" --mlir="$out/$n.plan.mlir" \
      --report="$out/$n.report.json"
  done
done
echo "golden-outputs: $(ls "$out" | wc -l) files in $out"
