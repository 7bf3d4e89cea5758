#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer run of reshard: configures
# build-asan/ once (g++, reshard's own code instrumented, assertions on;
# the packaged libMLIR.so and libLLVM.so are not instrumented), builds the
# tools, the unit tests and reshard-proptest, then runs the unit tests,
# `reshard-proptest --cases 2000` and the whole lit suite against that
# build. Any sanitizer report fails the run: UBSan stops at the first
# finding, ASan (and LeakSanitizer at exit) always does.
#
#   scripts/sanitize.sh                 build and run everything
#   RESHARD_JOBS=2 scripts/sanitize.sh  fewer parallel compile jobs
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RESHARD_ASAN_BUILD:-$root/build-asan}"
start=$(date +%s)

"$root/scripts/setup.sh"

# CMAKE_CXX_FLAGS reaches compiles and links alike. -O1 keeps the
# sanitizers fast and the build short; no NDEBUG, so reshard's code and
# the LLVM/MLIR inline code it instantiates keep their assertions.
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g1"
source "$root/scripts/lib/configure.sh"
reshard_configure "$build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1" \
  -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags"

# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons fresh slabs from
# our instrumented inline code, while the uninstrumented libMLIR.so hands
# out allocations from them without unpoisoning; every read of those would
# be a false "use-after-poison". Heap, stack and global checks stay on.
# lit passes these variables through to every test.
export ASAN_OPTIONS="allow_user_poisoning=0:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

status=0
# Builds the tools, reshard-proptest and the unit tests, then runs the
# lit suite and the unit tests (test/Unit) against build-asan.
# (Not the fuzzers, torch or a nested sanitizer run; its closing line is
# prefixed "sanitize" so that CI reads the outer suite's line last.)
RESHARD_FUZZ_IN_SUITE=0 RESHARD_SANITIZE_IN_SUITE=0 RESHARD_TORCH=0 \
  RESHARD_SUMMARY_PREFIX=sanitize RESHARD_BUILD="$build" "$root/scripts/test.sh" || status=$?

echo "sanitize: build, lit suite and unit tests done at $(( $(date +%s) - start )) s" >&2

echo "sanitize: reshard-proptest --cases 2000" >&2
prop=$(date +%s)
# A JUnit file of its own, which scripts/test.sh counts.
prop_status=0
"$build/bin/reshard-proptest" --cases 2000 --seed 1 || prop_status=$?
failure=""
if ((prop_status)); then
  failure='<failure message="reshard-proptest failed under ASan+UBSan"/>'
  status=$prop_status
fi
printf '<testsuites><testsuite name="sanitize" tests="1"><testcase classname="sanitize" name="reshard-proptest --cases 2000 --seed 1">%s</testcase></testsuite></testsuites>\n' \
  "$failure" > "$build/proptest-results.xml"
echo "sanitize: reshard-proptest took $(( $(date +%s) - prop )) s" >&2

echo "sanitize: finished in $(( $(date +%s) - start )) s, exit status $status" >&2
exit "$status"
