#!/usr/bin/env bash
# Here, where reshard's tools are built: everything scripts/gpu-check.sh
# needs from MLIR, for a GPU machine that has only CUDA and NCCL.
#   scripts/gpu-prepare.sh [PRE]   (default PRE: gpu-pre/, ignored; carry it)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${RESHARD_BUILD:-$root/build}/bin"
pre="${1:-$root/gpu-pre}"
plan="$root/examples/gpu/one-rank.mlir"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
mkdir -p "$pre" "$tmp/src" "$tmp/dst" "$tmp/gen"
"$bin/reshard-compile" "$plan" --backend=nccl -o "$pre/plan.cpp" --header="$pre/plan.h"
cp "$root/test/gpu/one-rank.tensors" "$pre/tensors.txt"
"$bin/reshard-run" "$plan" --make-sources "$tmp/src" --pattern=hash >/dev/null
"$bin/reshard-run" "$plan" --src "$tmp/src" --dst "$tmp/dst" --pattern=hash >/dev/null
"$bin/reshard-run" "$plan" --verify "$tmp/dst" --pattern=hash
(cd "$tmp/src" && sha256sum -- *) >"$pre/src.sha256"
(cd "$tmp/dst" && sha256sum -- *) >"$pre/expected.sha256"
# The device regenerates the sources from the manifest: prove here that it
# writes reshard-run's bytes, before any device time is spent.
g++ -O2 -std=c++11 "$root/test/gpu/make_sources.cpp" -o "$tmp/make_sources"
"$tmp/make_sources" "$pre/tensors.txt" "$tmp/gen"
(cd "$tmp/gen" && sha256sum --quiet -c "$pre/src.sha256")
# Multi-rank plans for test/gpu/all_ranks.cu (every rank on the one GPU):
# NAME INPUT STAGING-BUDGET; their small sources travel in PRE.
: >"$pre/all-ranks.txt"
while read -r name input budget; do
  "$bin/reshard-compile" "$root/$input" --backend=nccl \
    --staging-budget="$budget" -o "$pre/$name.cpp"
  rm -rf "$pre/$name-src"
  "$bin/reshard-run" "$root/$input" --make-sources "$pre/$name-src" \
    --pattern=hash >/dev/null
  "$bin/reshard-run" "$root/$input" --src "$pre/$name-src" \
    --dst "$tmp/$name-dst" >/dev/null
  "$bin/reshard-run" "$root/$input" --verify "$tmp/$name-dst" --pattern=hash
  (cd "$tmp/$name-dst" && sha256sum -- *) >"$pre/$name.sha256"
  echo "$name" >>"$pre/all-ranks.txt"
done <<'EOF'
quant test/Integration/mpi/Inputs/quant.json 4096
transits test/Integration/mpi/Inputs/transits.mlir 262144
dimorders test/Integration/mpi/Inputs/dim-orders.json 65536
EOF
echo "gpu-prepare: $pre ready ($(du -sh "$pre" | cut -f1))"
