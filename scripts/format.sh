#!/usr/bin/env bash
# Formats the C++ of the tree with the pinned clang-format (22, from
# scripts/setup.sh) and the repository's .clang-format (LLVM style).
#   scripts/format.sh            format every tracked C++ file in place
#   scripts/format.sh --check    change nothing; list unformatted files and
#                                exit 1 if there is any
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
clang_format=/usr/lib/llvm-22/bin/clang-format
if [ ! -x "$clang_format" ]; then
  "$root/scripts/setup.sh"
fi
version=$("$clang_format" --version)
case "$version" in
  *"version 22."*) ;;
  *) echo "format: $clang_format is not clang-format 22 ($version)" >&2; exit 2 ;;
esac

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac

# Every C++ source, tracked or new (not ignored): the compiler, tools,
# tests, benchmarks, examples.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.h' '*.cpp' '*.cu' | grep -v '^test/fuzz/corpus/')
else # a tree without git (an unpacked archive)
  mapfile -t files < <(find include lib tools test unittests bench examples \
    \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' \) -not -path 'test/fuzz/corpus/*' | sort)
fi
if ((check == 0)); then
  "$clang_format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1; then
    bad+=("$f")
  fi
done
if ((${#bad[@]})); then
  echo "format: ${#bad[@]} file(s) are not formatted (run scripts/format.sh):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format: ${#files[@]} files formatted"
