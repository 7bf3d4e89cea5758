#!/usr/bin/env bash
# Installs what reshard needs on a fresh Debian 12 machine, plus any extra
# Debian packages named as arguments (scripts/setup-fuzz.sh passes clang).
# libsimgrid-dev is for the flow-level refit simulation (bench/sim_bench.py,
# its smoke test in the suite). Idempotent: when everything is present it only checks, quietly, in well
# under a second.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache python3
  clang-format-22
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libgtest-dev
  openmpi-bin libopenmpi-dev
  libsimgrid-dev
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq >/dev/null
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python front end's tests and plots (python/) need pytest and
# matplotlib; checked without importing them, so a ready machine pays ~50 ms.
if ! python3 -c 'import importlib.util as u, sys
sys.exit(not all(u.find_spec(m) for m in ("pytest", "matplotlib")))' 2>/dev/null; then
  echo "setup: installing pytest matplotlib" >&2
  if ! python3 -m pip install --quiet pytest matplotlib >/dev/null 2>&1; then
    # Debian's own python3 has no pip (or refuses it, PEP 668): use apt.
    sudo_cmd=()
    if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
    "${sudo_cmd[@]}" apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
      --no-install-recommends python3-pytest python3-matplotlib >/dev/null
  fi
fi

# mpi4py in the suite's Python venv ($RESHARD_PY_VENV, which
# bench/setup-bench.sh passes after it made the venv with torch), built from
# source against Debian's Open MPI, so that the library mpi4py calls is the
# one mpicxx links the plans against. Python's reshard.Plan.run takes an
# mpi4py communicator (python/tests/test_runtime.py).
venv="${RESHARD_PY_VENV:-}"
if [ -n "$venv" ] && [ -x "$venv/bin/python" ]; then
  if ! "$venv/bin/python" -c 'import mpi4py' 2>/dev/null; then
    echo "setup: building mpi4py in $venv against $(command -v mpicc)" >&2
    MPICC=mpicc "$venv/bin/python" -m pip install --quiet --no-cache-dir \
      --no-binary mpi4py mpi4py >/dev/null
  fi
  # The same MPI: mpi4py's library version names the release mpicxx reports.
  want="$(mpicxx --showme:version 2>&1 | sed -n 's/.*Open MPI \([0-9.]*\).*/\1/p')"
  have="$("$venv/bin/python" -c 'from mpi4py import MPI; print(MPI.Get_library_version())' |
          sed -n '1s/.*Open MPI v\([0-9.]*\).*/\1/p')"
  if [ -z "$want" ] || [ "$want" != "$have" ]; then
    echo "setup: mpi4py in $venv uses Open MPI '${have:-?}', mpicxx links '${want:-?}'" >&2
    exit 1
  fi
fi
