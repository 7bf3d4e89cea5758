# Shared by the bench scripts: finds the build and defines `measure`.
# Source it after setting `root`; it sets `build` and `tmp`.

build=${RESHARD_BUILD:-build}
# A relative build dir is taken from the current directory, else the repo root.
if [[ ! -x "$build/bin/reshard-opt" && -x "$root/$build/bin/reshard-opt" ]]; then
  build="$root/$build"
fi
for tool in reshard-translate reshard-opt; do
  if [[ ! -x "$build/bin/$tool" ]]; then
    echo "bench: $build/bin/$tool not found; build first or set RESHARD_BUILD" >&2
    exit 1
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure LABEL CMD...: runs CMD, prints "LABEL  <wall> s  <rss> MiB".
if /usr/bin/time -v true >/dev/null 2>&1; then
  measure() {
    local label=$1; shift
    if ! /usr/bin/time -v -o "$tmp/time.txt" "$@"; then
      echo "bench: $label failed" >&2
      exit 1
    fi
    awk -v label="$label" '
      /Elapsed \(wall clock\) time/ {
        n = split($NF, p, ":"); wall = 0
        for (i = 1; i <= n; i++) wall = wall * 60 + p[i]
      }
      /Maximum resident set size/ { rss = $NF / 1024 }
      END { printf "%-28s %8.2f s  %8.1f MiB\n", label, wall, rss }' "$tmp/time.txt"
  }
else
  measure() {
    local label=$1; shift
    python3 - "$label" "$@" <<'EOF'
import resource, subprocess, sys, time
label, cmd = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
rc = subprocess.call(cmd)
wall = time.perf_counter() - start
if rc != 0:
    sys.exit(f"bench: {label} failed")
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
print(f"{label:<28} {wall:8.2f} s  {rss:8.1f} MiB")
EOF
  }
fi

