#!/usr/bin/env bash
# Checks the NCCL backend on a machine with one NVIDIA GPU, in well under 5
# minutes: builds the tools, checks the CUDA pack/unpack of strided boxes
# against the host loops on random boxes, runs a one-rank plan through NCCL
# and verifies every destination element with reshard-run, and prints the
# plan's bandwidth against cudaMemcpy device to device.
#   scripts/gpu-check.sh [OUT]        (default OUT: a fresh temporary folder)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RESHARD_BUILD:-$root/build}"
out="${1:-$(mktemp -d)}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
arch="${RESHARD_CUDA_ARCH:-sm_90}"

"$root/scripts/build.sh" reshard-opt reshard-translate reshard-run >/dev/null
bin="$build/bin"
mkdir -p "$out/src" "$out/dst"
plan="$root/examples/gpu/one-rank.mlir"
"$bin/reshard-translate" --reshard-to-cpp --backend=nccl "$plan" -o "$out/plan.cpp"
"$bin/reshard-translate" --reshard-to-cpp --backend=nccl --reshard-cpp-emit=header "$plan" -o "$out/plan.h"
"$cuda/bin/nvcc" -O2 -std=c++17 -arch="$arch" -x cu -I"$root/include" -I"$out" \
  "$root/test/gpu/gpu_check.cu" "$out/plan.cpp" -L"$cuda/lib64" -lnccl -lcudart \
  -o "$out/gpu_check"
"$bin/reshard-run" "$plan" --make-sources "$out/src" --pattern=hash
"$out/gpu_check" "$out/src" "$out/dst"
"$bin/reshard-run" "$plan" --verify "$out/dst" --pattern=hash
