#!/usr/bin/env bash
# Times the whole compile of a model's refit plan to an object file:
# import -> plan (intersect, route, schedule) -> lower -> C++ -> g++ -O2,
# for the MPI and the NCCL backend, and reports the generated sizes.
#   RESHARD_BUILD=build bench/codegen_bench.sh [SCENARIO]   (default deepseek-v3-dgx)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/bench/common.sh"
scenario="${1:-deepseek-v3-dgx}"

python3 "$root/bench/make_refit_scenario.py" --scenario "$scenario" --out "$tmp/layout.json" 2>/dev/null
echo "scenario $scenario"
measure "import (JSON -> MLIR)" "$build/bin/reshard-translate" --import-layout-json "$tmp/layout.json" -o "$tmp/layout.mlir"
measure "plan + lower" "$build/bin/reshard-opt" "$tmp/layout.mlir" \
  --reshard-plan-pipeline=staging-budget=268435456 -o "$tmp/plan.mlir"
measure "reshard-compile (mpi)" "$build/bin/reshard-compile" "$tmp/layout.json" \
  --backend=mpi --staging-budget=256M -o "$tmp/plan-one-command.cpp"
for backend in mpi nccl; do
  measure "translate to C++ ($backend)" "$build/bin/reshard-translate" --reshard-to-cpp \
    --backend=$backend "$tmp/plan.mlir" -o "$tmp/plan-$backend.cpp"
done
cuda_include=""
[ -d /usr/local/cuda/include ] && cuda_include="-I/usr/local/cuda/include"
mpi_include=$(mpicxx --showme:compile 2>/dev/null || true)
measure "g++ -O2 -c (mpi)" g++ -O2 -std=c++17 -I"$root/include" $mpi_include -c "$tmp/plan-mpi.cpp" -o "$tmp/plan-mpi.o"
if [ -n "$cuda_include" ]; then
  measure "g++ -O2 -c (nccl)" g++ -O2 -std=c++17 -I"$root/include" $cuda_include -c "$tmp/plan-nccl.cpp" -o "$tmp/plan-nccl.o"
fi
echo "sizes: plan.mlir $(wc -c <"$tmp/plan.mlir") B, plan-mpi.cpp $(wc -c <"$tmp/plan-mpi.cpp") B," \
     "plan-mpi.o $(wc -c <"$tmp/plan-mpi.o") B$( [ -f "$tmp/plan-nccl.o" ] && echo ", plan-nccl.o $(wc -c <"$tmp/plan-nccl.o") B")"
