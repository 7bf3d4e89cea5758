#!/usr/bin/env bash
# On a machine with one NVIDIA GPU, CUDA (nvcc, g++) and NCCL, no MLIR and no
# network: builds test/gpu/gpu_check.cu against the plan that
# scripts/gpu-prepare.sh generated (PRE, default gpu-pre/), checks the CUDA
# pack/unpack on random boxes and over the maximum pitch, a step that sends
# to the rank itself, runs the one-rank plan through NCCL (blocking and
# nonblocking communicators), checks every destination byte against
# reshard-run's result (sha256), and prints the bandwidth against cudaMemcpy
# D2D; runs multi-rank plans (scripts/gpu-prepare.sh names them) with every
# rank a thread on this GPU (test/gpu/all_ranks.cu), their destination
# bytes against reshard-run's; then the one-rank plan as a shared library
# through python/reshard's Plan.load and Plan.run on torch CUDA tensors
# (verify=True; again into fp32 destinations for the bf16 tensors, on a
# side stream), when a python3 with torch and CUDA is there; last the
# figures of bench/gpu/fused_pack_variants.cu. Every stage runs even when
# one before it failed; the script then fails at the end, and
# RESHARD_GPU_KEEP=DIR keeps the destination files that differ. On an H200
# the whole script takes about a minute (BENCHMARKS.md section 5).
#   scripts/gpu-check.sh [--build-only] [WORK]   (shards, ~600 MB: keep them out of $OUT)
# --build-only stops after compiling (the suite runs that part, without a GPU).
# With the device tool: here `scripts/gpu-prepare.sh`, then
#   run(command="set -o pipefail; RESHARD_GPU_KEEP=$OUT/mismatch \
#       bash scripts/gpu-check.sh 2>&1 | tee $OUT/log", carry=["gpu-pre"],
#       timeout_s=300)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
pre="${RESHARD_GPU_PRE:-$root/gpu-pre}"
work="${1:-$(mktemp -d /tmp/reshard-gpu.XXXXXX)}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
arch="${RESHARD_CUDA_ARCH:-sm_90}"
for f in plan.cpp plan.h tensors.txt src.sha256 expected.sha256; do
  [ -f "$pre/$f" ] || { echo "gpu-check: $pre/$f missing: run scripts/gpu-prepare.sh where the tools are built, and carry $pre" >&2; exit 1; }
done
nvcc="$cuda/bin/nvcc"; [ -x "$nvcc" ] || nvcc="$(command -v nvcc)"

# NCCL: CUDA_HOME, the system, or the nvidia-nccl wheel of python3 (PyTorch's).
nccl_inc="" nccl_lib=""
for d in "${NCCL_HOME:-}" "$cuda" /usr/local /usr \
    "$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)"; do
  [ -n "$d" ] && [ -f "$d/include/nccl.h" ] || continue
  for l in "$d/lib64" "$d/lib" "$d/lib/x86_64-linux-gnu"; do
    if [ -e "$l/libnccl.so.2" ]; then nccl_inc="$d/include" nccl_lib="$l"; break 2; fi
  done
done
[ -n "$nccl_lib" ] || { echo "gpu-check: no nccl.h + libnccl.so.2 found (set NCCL_HOME)" >&2; exit 1; }
inc=(); [ "$nccl_inc" = /usr/include ] || inc=(-I"$nccl_inc")   # never -I/usr/include
echo "gpu-check: nvcc $("$nvcc" --version | tail -1); NCCL from $nccl_lib"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

mkdir -p "$work/src" "$work/dst"
link=(-L"$nccl_lib" -l:libnccl.so.2 -Xlinker -rpath,"$nccl_lib")
# The programs compile side by side; each failure is reported.
pids=()
"$nvcc" -O2 -std=c++17 -arch="$arch" -x cu "${inc[@]}" -I"$root/include" -I"$pre" \
  "$root/test/gpu/gpu_check.cu" "$pre/plan.cpp" "${link[@]}" -o "$work/gpu_check" &
pids+=($!)
# The same plan as a shared library, for python/reshard's Plan.load.
"$nvcc" -O2 -std=c++17 -arch="$arch" -x cu -shared -Xcompiler -fPIC \
  -Xlinker -Bsymbolic "${inc[@]}" -I"$root/include" "$pre/plan.cpp" \
  "${link[@]}" -o "$work/libplan.so" &
pids+=($!)
# Multi-rank plans, every rank a thread on this GPU (test/gpu/all_ranks.cu).
all_ranks=()
[ -f "$pre/all-ranks.txt" ] && mapfile -t all_ranks <"$pre/all-ranks.txt"
for name in "${all_ranks[@]}"; do
  "$nvcc" -O2 -std=c++17 -arch="$arch" -x cu "${inc[@]}" -I"$root/include" \
    -DRESHARD_PLAN_FILE="\"$pre/$name.cpp\"" "$root/test/gpu/all_ranks.cu" \
    "${link[@]}" -o "$work/all_ranks_$name" &
  pids+=($!)
done
# Figures only: the fused pack's parts (bench/gpu/fused_pack_variants.cu).
"$nvcc" -O2 -std=c++17 -arch="$arch" -I"$root/include" \
  "$root/bench/gpu/fused_pack_variants.cu" -o "$work/fused_pack_variants" &
pids+=($!)
g++ -O2 -std=c++11 "$root/test/gpu/make_sources.cpp" -o "$work/make_sources"
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || { echo "gpu-check: a program did not compile" >&2; exit 1; }
if [ "$build_only" = 1 ]; then
  echo "gpu-check: built $work/gpu_check and $work/libplan.so"
  echo "gpu-check: built all_ranks for ${#all_ranks[@]} plans: ${all_ranks[*]}"
  echo "gpu-check: built fused_pack_variants"
  exit 0
fi
"$work/make_sources" "$pre/tensors.txt" "$work/src"
(cd "$work/src" && sha256sum --quiet -c "$pre/src.sha256")

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}" NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME="${NCCL_SOCKET_IFNAME:-lo}"   # no network there
# Every stage runs even when one before it failed; the script fails at the
# end. Destination files that differ from reshard-run's are copied to KEEP
# (RESHARD_GPU_KEEP, e.g. $OUT/mismatch) for a look on the host.
keep="${RESHARD_GPU_KEEP:-}"
failures=()
compare() { # STAGE DIR SUMS: every destination byte against reshard-run's
  local out bad
  out="$(cd "$2" && sha256sum -c "$3" 2>/dev/null)" && return 0
  bad="$(printf '%s\n' "$out" | sed -n 's/: FAILED.*$//p')"
  failures+=("$1")
  echo "gpu-check: $1: destination files differ from reshard-run's: ${bad:-(missing)}"
  if [ -n "$keep" ] && [ -n "$bad" ]; then
    mkdir -p "$keep/$1"
    for f in $bad; do cp -- "$2/$f" "$keep/$1/" 2>/dev/null || true; done
  fi
  return 1
}
if timeout -k 5 180 "$work/gpu_check" "$work/src" "$work/dst"; then
  compare one-rank "$work/dst" "$pre/expected.sha256" &&
    echo "gpu-check: all destination bytes match reshard-run's"
else
  failures+=(gpu_check)
fi
for name in "${all_ranks[@]}"; do
  mkdir -p "$work/$name-dst"
  if timeout -k 5 120 "$work/all_ranks_$name" "$pre/$name-src" "$work/$name-dst"; then
    compare "$name" "$work/$name-dst" "$pre/$name.sha256" &&
      echo "gpu-check: plan $name, all ranks: every destination byte matches reshard-run's"
  else
    failures+=("all_ranks $name")
  fi
done
# From PyTorch: Plan.run on torch CUDA tensors (verify=True), byte-exact.
py="${RESHARD_GPU_PYTHON:-python3}"
if "$py" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  if timeout -k 5 180 "$py" "$root/test/gpu/torch_check.py" "$work/libplan.so" "$work/src" "$work/dst-torch"; then
    compare torch "$work/dst-torch" "$pre/expected.sha256" &&
      echo "gpu-check: Plan.run from torch: all destination bytes match reshard-run's"
  else
    failures+=(torch)
  fi
else
  echo "gpu-check: no torch with CUDA in $py: Plan.run from torch not checked"
fi
timeout -k 5 120 "$work/fused_pack_variants" || failures+=(fused_pack_variants)
if [ "${#failures[@]}" -gt 0 ]; then
  echo "gpu-check: FAILED: ${failures[*]}" >&2
  exit 1
fi
echo "gpu-check: every check passed"
