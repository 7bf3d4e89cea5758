#!/usr/bin/env bash
# The main job on a bundled example: builds on first use, then compiles a
# layout (default examples/tp4-to-tp2.mlir; a .json layout works the same)
# the whole way into OUT (default build/example):
#   layout.mlir    the layout, verified (a JSON layout imported)
#   planned.mlir   after reshard-plan-pipeline without the lowering: the
#                  pieces, routes and steps, checked element by element
#   report.json    the plan's report (the text form is printed)
#   plan.mlir      the per-rank reshard_rt programs
#   example_{nccl,mpi}.{cpp,h}   the C++ of both backends (reshard-compile)
# docs/Walkthrough.md follows one tensor through these files.
#   scripts/run-example.sh [LAYOUT] [OUT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RESHARD_BUILD:-$root/build}"
input="${1:-$root/examples/tp4-to-tp2.mlir}"
out="${2:-$build/example}"

"$root/scripts/build.sh" reshard-compile reshard-opt reshard-run >/dev/null
bash "$root/scripts/lib/example-steps.sh" "$build/bin" "$input" "$out"
