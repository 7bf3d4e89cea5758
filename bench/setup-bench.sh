#!/usr/bin/env bash
# A virtual environment with PyTorch (CPU use, gloo) for the DTensor
# comparison of bench/measured_bench.py and the DTensor interop tests of
# python/tests (it also gets pytest and matplotlib, so the whole pytest suite
# runs in it). scripts/test.sh calls this (RESHARD_TORCH=0 opts out) and
# goes on without torch if it fails. Not part of scripts/setup.sh: PyPI's Linux x86_64 torch wheel is the CUDA build and
# pulls the nvidia-*/cuda-*/triton wheels; measured here (torch 2.15.0,
# 2026-11-29) that is ~3.0 GB downloaded, 5.4 GB installed, 1 min 44 s.
# `pip install --no-deps torch` (539 MB) does not import without them
# (ImportError: libcufile.so.0), and download.pytorch.org's CPU wheels are
# not reachable from this machine.
#
#   bench/setup-bench.sh            # venv in $RESHARD_BENCH_VENV or build/bench-venv
#
# measured_bench.py finds build/bench-venv/bin/python by itself (or pass
# --torch-python / set RESHARD_TORCH_PYTHON); lit enables its `torch`
# feature when that venv exists.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RESHARD_BENCH_VENV:-$root/build/bench-venv}"
python="${PYTHON:-python3}"

# Megatron-Core and Megatron-Bridge, for python/tests/test_megatron_qkv.py
# (Megatron-Bridge's merge_qkv_weights against the presets' linear_qkv
# order). Without their dependencies: transformer_engine has no CPU wheel,
# and the test loads only the modules it needs. Optional: the test skips
# without them, so a failure here does not fail the venv.
megatron() {
  "$venv/bin/python" -m pip show --quiet megatron-core megatron-bridge \
      >/dev/null 2>&1 && return 0
  "$venv/bin/python" -m pip install --quiet --no-cache-dir --no-deps \
      megatron-core==0.16.1 megatron-bridge==0.3.1 ||
    echo "setup-bench: no megatron-core/megatron-bridge (their test skips)" >&2
}

if [[ -x "$venv/bin/python" ]] &&
   "$venv/bin/python" -c 'import torch.distributed as d, pytest, matplotlib; assert d.is_gloo_available()' 2>/dev/null; then
  echo "setup-bench: torch already in $venv"
  megatron
  RESHARD_PY_VENV="$venv" "$root/scripts/setup.sh"
  exit 0
fi
start=$(date +%s)
# A half-installed venv (network cut, full disk) would still look like torch
# to lit's feature check: any failure removes it, so the torch tests report
# unsupported instead of failing.
if ! { "$python" -m venv "$venv" &&
       "$venv/bin/python" -m pip install --quiet --no-cache-dir torch numpy pytest matplotlib &&
       "$venv/bin/python" -c 'import torch, torch.distributed as d, pytest, matplotlib
assert d.is_gloo_available(), "torch without gloo"
print("setup-bench: torch", torch.__version__, "with gloo")'; }; then
  echo "setup-bench: could not install torch; removing $venv" >&2
  rm -rf "$venv"
  exit 1
fi
megatron
# mpi4py beside torch, against the system's Open MPI (scripts/setup.sh).
RESHARD_PY_VENV="$venv" "$root/scripts/setup.sh"
echo "setup-bench: $venv ($(du -sh "$venv" | cut -f1)) in $(( $(date +%s) - start )) s"
