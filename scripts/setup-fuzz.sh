#!/usr/bin/env bash
# Installs what scripts/fuzz.sh needs on top of scripts/setup.sh: Debian's
# clang and its runtime libraries (libFuzzer, ASan, UBSan). The test suite
# does not need them; its fuzzing tests run only where the fuzzers are built.
# Idempotent: when everything is present it only checks.
set -euo pipefail

exec "$(dirname "${BASH_SOURCE[0]}")/setup.sh" clang libclang-rt-dev
