#!/usr/bin/env bash
# The whole test suite: builds on first use, then runs every lit test
# (dialect, importer, tools, MPI runs, CMake consumer) and every unit test
# through check-reshard, then the fuzzers' short runs and regression inputs
# in their own clang + sanitizer build (build-fuzz/, scripts/fuzz.sh check;
# RESHARD_FUZZ_IN_SUITE=0 leaves them out), the whole lit suite and 2,000
# property cases again under ASan + UBSan (build-asan/, scripts/sanitize.sh;
# RESHARD_SANITIZE_IN_SUITE=0), then the Python front end's pytest suite
# (python/tests).
#   scripts/test.sh            the whole suite (what CI runs)
#   scripts/test.sh --quick    dialect, pass, conversion, translation and tool
#                              tests plus unit tests (check-reshard-quick)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RESHARD_BUILD:-$root/build}"
case "${1:-}" in
  "" | --quick) ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac

# The build's progress is kept out of the way, but not its errors (ninja
# prints them on standard output).
build_log="$(mktemp)"
if ! "$root/scripts/build.sh" reshard-compile reshard-opt reshard-translate \
    reshard-run reshard-proptest ReshardUnitTests >"$build_log" 2>&1; then
  tail -n 60 "$build_log" >&2
  echo "test: the build failed (whole log: $build_log)" >&2
  exit 1
fi
rm -f "$build_log"
if [ "${1:-}" = --quick ]; then
  exec ninja -C "$build" check-reshard-quick
fi

# PyTorch (CPU wheel from PyPI, ~3 GB with its CUDA dependencies, ~2 min)
# in build/bench-venv, for the DTensor interop and benchmark tests; without
# it (RESHARD_TORCH=0, or no network) those tests are reported unsupported.
pytest_python=python3
if [ "${RESHARD_TORCH:-1}" != 0 ]; then
  RESHARD_BENCH_VENV="$build/bench-venv" "$root/bench/setup-bench.sh" >&2 ||
    echo "test: torch could not be installed; DTensor tests will be skipped" >&2
fi
if "$build/bench-venv/bin/python" -c 'import pytest, matplotlib' 2>/dev/null; then
  pytest_python="$build/bench-venv/bin/python"
fi

# Every part writes a JUnit file; the closing line sums them all.
results=("$build/test-results.xml")
rm -f "${results[@]}"
status=0
/usr/lib/llvm-22/bin/lit -sv --xunit-xml-output="${results[0]}" "$build/test" "$build/test/Unit" || status=$?

if [ "${RESHARD_FUZZ_IN_SUITE:-1}" != 0 ]; then
  fuzz_results="${RESHARD_FUZZ_BUILD:-$root/build-fuzz}/fuzz-results.xml"
  rm -f "$fuzz_results"
  results+=("$fuzz_results")
  RESHARD_LIT_ARGS="${RESHARD_LIT_ARGS:-} --xunit-xml-output=$fuzz_results" "$root/scripts/fuzz.sh" check || status=$?
fi

# The tools, unit and property tests again, built with AddressSanitizer and
# UndefinedBehaviorSanitizer (build-asan/, scripts/sanitize.sh; about 8
# minutes the first time). RESHARD_SANITIZE_IN_SUITE=0 leaves them out.
if [ "${RESHARD_SANITIZE_IN_SUITE:-1}" != 0 ]; then
  asan_build="${RESHARD_ASAN_BUILD:-$root/build-asan}"
  results+=("$asan_build/test-results.xml" "$asan_build/proptest-results.xml"
            "$asan_build/pytest-results.xml")
  "$root/scripts/sanitize.sh" || status=$?
fi

# The Python front end (python/tests) against the same tools. pytest's exit
# 5 (nothing collected) fails the script, on purpose.
py_results="$build/pytest-results.xml"
rm -f "$py_results"
results+=("$py_results")
PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" RESHARD_BIN="$build/bin" MPLBACKEND=Agg \
  "$pytest_python" -m pytest "$root/python/tests" -q --junitxml="$py_results" || status=$?

# A plain closing line that CI reads: "N passed, N failed".
python3 - "${results[@]}" <<'PY'
import os, sys, xml.etree.ElementTree as ET
passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        cases = ET.parse(path).getroot().iter("testcase")
    except (OSError, ET.ParseError):
        print(f"reshard: no results in {path}")
        failed += 1
        continue
    for case in cases:
        skip = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif skip is None:
            passed += 1
        elif not skip.get("message", "").startswith("Test not selected"):
            skipped += 1  # unsupported here; tests left out by a filter are not counted
print(f"{os.environ.get('RESHARD_SUMMARY_PREFIX', 'reshard')}: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit "$status"
