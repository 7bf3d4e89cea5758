# Sourced by scripts/run-example.sh, and run by the walkthrough's lit test:
# the main job's steps on tools in BIN, from LAYOUT into OUT.
#   bash scripts/lib/example-steps.sh BIN LAYOUT OUT
set -euo pipefail
bin="$1" input="$2" out="$3"
mkdir -p "$out"

"$bin/reshard-opt" "$input" -o "$out/layout.mlir"
echo "== $input: verified"
"$bin/reshard-opt" "$out/layout.mlir" --reshard-plan-pipeline=lower=false \
  --reshard-report -o "$out/planned.mlir"
echo "== planned: $out/planned.mlir"
"$bin/reshard-opt" "$out/planned.mlir" --reshard-expand -o "$out/explicit.mlir"
echo "== explicit pieces: $out/explicit.mlir"
"$bin/reshard-run" "$out/planned.mlir" --check
"$bin/reshard-run" "$out/planned.mlir" --check --engine
for backend in nccl mpi; do
  "$bin/reshard-compile" "$out/layout.mlir" --backend=$backend --plan-name=example \
    -o "$out/example_$backend.cpp" --header="$out/example_$backend.h" \
    --mlir="$out/plan.mlir" --report="$out/report.json"
done
echo "== report: $out/report.json"
echo "== runtime program: $out/plan.mlir"
echo "== C++: $out/example_nccl.{cpp,h} (NCCL + CUDA), $out/example_mpi.{cpp,h} (MPI)"
