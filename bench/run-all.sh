#!/usr/bin/env bash
# Every benchmark table of BENCHMARKS.md in one run (hours on 2 cores: since
# the one-pace schedule SimGrid replays every stream in every step):
# bytes and modelled time (refit_bench.py), modelled time against the
# physical bound (bound_bench.py), FP8 refit against bf16 (quant_bench.py),
# the one-command compile
# (compile_bench.py), compile stages and the SimGrid simulation
# (sim_bench.py), then the runs measured on this machine
# (measured_bench.py: MPI plan vs MPI gather+broadcast, DTensor over gloo).
# Builds the tools on first use; torch for the DTensor table comes from
# bench/setup-bench.sh (skipped with a note if it cannot be installed).
#
#   bench/run-all.sh [--smoke]     --smoke: one small scenario per table (~1 min)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh" reshard-compile reshard-opt reshard-translate reshard-run >/dev/null
"$root/bench/setup-bench.sh" >&2 || echo "run-all: no torch; the DTensor table is skipped" >&2

if [ "${1:-}" = --smoke ]; then
  python3 "$root/bench/refit_bench.py" --scenarios llama70b-dgx
  python3 "$root/bench/bound_bench.py" --layers 2 --scenarios qwen235b-gb200-shared --simulate
  python3 "$root/bench/quant_bench.py" --smoke --repeat 1
  python3 "$root/bench/compile_bench.py" --smoke --repeat 1
  python3 "$root/bench/sim_bench.py" --smoke
  python3 "$root/bench/measured_bench.py" --smoke
else
  python3 "$root/bench/refit_bench.py"
  # SimGrid replays what it can in ~15 minutes; NeMo RL, M2N DeepSeek-V3
  # and Kimi-K2 would take hours each (BENCHMARKS.md §3).
  python3 "$root/bench/bound_bench.py" --simulate llama70b-dgx,qwen235b-dgx,deepseek-v3-dgx,llama70b-gb200,qwen235b-gb200,deepseek-v3-gb200,qwen235b-m2n-gb200,qwen235b-gb200-shared
  python3 "$root/bench/quant_bench.py"
  python3 "$root/bench/compile_bench.py"
  python3 "$root/bench/sim_bench.py"
  python3 "$root/bench/measured_bench.py"
fi
