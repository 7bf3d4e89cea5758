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
echo "gpu-prepare: $pre ready ($(du -sh "$pre" | cut -f1))"
