# Sourced by build.sh, fuzz.sh and sanitize.sh. reshard_configure BUILD
# [CMAKE ARGS...] configures BUILD once (Ninja, Debian's MLIR 22, ccache when
# installed, then the given arguments and $RESHARD_CMAKE_ARGS); an already
# configured BUILD is left as it is.
reshard_configure() {
  local build="$1"
  shift
  [ -f "$build/build.ninja" ] && return 0
  local src launcher=()
  src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -G Ninja -S "$src" -B "$build" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    "${launcher[@]}" "$@" ${RESHARD_CMAKE_ARGS:-} >/dev/null
}
