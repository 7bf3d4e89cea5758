#!/usr/bin/env bash
# Installs what scripts/fuzz.sh needs on top of scripts/setup.sh: Debian's
# clang and its runtime libraries (libFuzzer, ASan, UBSan). The test suite
# does not need them; its fuzzing tests run only where the fuzzers are built.
# Idempotent: when everything is present it only checks.
set -euo pipefail

packages=(clang libclang-rt-dev)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup-fuzz: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq >/dev/null
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
