#!/usr/bin/env bash
# Fuzzing with libFuzzer. Configures build-fuzz/ once (Debian's clang,
# -DRESHARD_ENABLE_FUZZERS=ON, reshard's code built with coverage and
# AddressSanitizer + UndefinedBehaviorSanitizer, assertions on), builds the
# fuzz targets and runs them.
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]   a campaign (default: all, 300 s
#                                            per target)
#   scripts/fuzz.sh check                    the suite's short runs and the
#                                            regression inputs (lit, test/fuzz)
#   scripts/fuzz.sh replay TARGET FILE...    run inputs once (a crash found
#                                            by a campaign, say)
#
# TARGET is reshard-fuzz-mlir, reshard-fuzz-json or reshard-fuzz-planner.
# A campaign grows build-fuzz/corpus/TARGET (seeded from
# test/fuzz/corpus/TARGET, which it never writes) and leaves crashing inputs
# in build-fuzz/artifacts/TARGET/; copy one into
# test/fuzz/regressions/TARGET/ when it is fixed. Extra libFuzzer flags go
# in RESHARD_FUZZ_FLAGS (e.g. "-fork=2" for two processes,
# "-runs=1000000" to stop after a number of inputs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RESHARD_FUZZ_BUILD:-$root/build-fuzz}"
targets=(reshard-fuzz-mlir reshard-fuzz-json reshard-fuzz-planner)

"$root/scripts/setup.sh"
"$root/scripts/setup-fuzz.sh"

# Everything built here carries the instrumentation; -fsanitize=fuzzer
# proper (libFuzzer's main) is added to the fuzz targets by
# test/fuzz/CMakeLists.txt. No NDEBUG: reshard's code and the LLVM/MLIR
# inline code it instantiates (cast<>, ArrayRef bounds) keep their
# assertions, which the packaged libMLIR.so lacks.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -gline-tables-only"
source "$root/scripts/lib/configure.sh"
reshard_configure "$build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1" \
  -DCMAKE_C_COMPILER="${RESHARD_FUZZ_CC:-$(command -v clang)}" \
  -DCMAKE_CXX_COMPILER="${RESHARD_FUZZ_CXX:-$(command -v clang++)}" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DRESHARD_ENABLE_FUZZERS=ON
ninja -C "$build" -j "${RESHARD_JOBS:-$(nproc)}" reshard-fuzzers

export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

mode="${1:-all}"
case "$mode" in
check)
  # The lit tests of test/fuzz only (they need nothing but the fuzzers).
  exec /usr/lib/llvm-22/bin/lit -sv ${RESHARD_LIT_ARGS:-} "$build/test" --filter='fuzz/'
  ;;
replay)
  shift
  target="${1:?usage: scripts/fuzz.sh replay TARGET FILE...}"
  shift
  exec "$build/bin/$target" -runs=1 "$@"
  ;;
all)
  selected=("${targets[@]}")
  ;;
reshard-fuzz-*)
  selected=("$mode")
  ;;
*)
  echo "fuzz.sh: unknown target '$mode'; use one of ${targets[*]}, all, check or replay" >&2
  exit 2
  ;;
esac
seconds="${2:-300}"

for target in "${selected[@]}"; do
  corpus="$build/corpus/$target"
  artifacts="$build/artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  dict=()
  if [ -f "$root/test/fuzz/$target.dict" ]; then
    dict=("-dict=$root/test/fuzz/$target.dict")
  fi
  echo "fuzz.sh: $target for ${seconds}s (corpus $corpus)" >&2
  # New inputs go to the first directory only: the seeds stay as they are.
  "$build/bin/$target" -max_total_time="$seconds" -timeout=30 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "${dict[@]}" ${RESHARD_FUZZ_FLAGS:-} "$corpus" "$root/test/fuzz/corpus/$target"
done
