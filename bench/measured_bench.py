#!/usr/bin/env python3
"""Measured on this machine, side by side in one run (issue #7, item 4):

1. reshard's generated MPI plan against an MPI gather+broadcast program of
   the same layouts, 8 processes under mpirun, on the bundled refit
   scenarios re-mapped onto 8 colocated ranks and scaled down;
2. PyTorch DTensor `redistribute` (CPU, gloo) against reshard's MPI plan on
   same-mesh redistributions, same process count (needs torch: see
   bench/setup-bench.sh; skipped with a note when it is missing).

  python3 bench/measured_bench.py [--smoke] [--scenario NAME ...] [--reps R]
      [--layers N] [--scale-down F] [--bucket-bytes B] [--work DIR]
      [--torch-python PY] [--no-dtensor] [--no-mpi]

Both MPI programs are timed the same way (bench/measured/timing.h: barrier,
wall time of the slowest rank for the data movement only, file I/O
excluded, median of --reps) and both write their destination shards, which
`reshard-run --verify` checks element by element against the global-index
pattern its --make-sources wrote. Prints Markdown tables.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEASURED = os.path.join(ROOT, "bench", "measured")
sys.path.insert(0, MEASURED)
import dtensor_bench  # noqa: E402  (torch-free parts: CASES, case_layout)
import gather_table  # noqa: E402

# The bundled scenarios re-mapped onto 8 colocated ranks, keeping each
# model's kind of layout (see bench/Measured.md).
EIGHT_RANKS = {
    "llama-3.1-70b": dict(train="tp=2,pp=2,dp=2", infer="tp=4,dp=2",
                          layers=4),
    "qwen3-235b-a22b": dict(train="tp=2,cp=2,pp=2,ep=4,etp=1,dp=1",
                            infer="tp=4,dp=2,ep=1", layers=4),
    "deepseek-v3": dict(train="tp=2,pp=2,ep=4,etp=1,dp=2",
                        infer="tp=4,dp=2,ep=1", layers=6),
}
SCENARIOS = {
    "llama70b-dgx": "llama-3.1-70b", "qwen235b-dgx": "qwen3-235b-a22b",
    "deepseek-v3-dgx": "deepseek-v3", "llama70b-gb200": "llama-3.1-70b",
    "qwen235b-gb200": "qwen3-235b-a22b", "deepseek-v3-gb200": "deepseek-v3",
}
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader",
               OMPI_MCA_pml="ob1", OMPI_MCA_oob_tcp_if_include="lo",
               HWLOC_COMPONENTS="-gl")
# More processes than cores: yield in MPI's progress loop instead of
# spinning, so a waiting rank lets the one it waits for run.
MPIRUN = ["mpirun", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# A step that hangs (a deadlocked program, a stuck rank) fails the benchmark
# instead of stalling it; the longest full-size step takes about a minute.
STEP_TIMEOUT_S = int(os.environ.get("RESHARD_BENCH_TIMEOUT", "1800"))


def run(cmd, env=None, quiet=False, crash_retries=0):
    """crash_retries: for the torch baselines only, runs again when a
    worker process died by a signal (gloo has aborted a process on this
    oversubscribed machine, 'terminate called without an active
    exception'); any other failure, and ours always, fails at once."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=STEP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        sys.exit("measured_bench: FAILED: no result after %d s "
                 "(RESHARD_BENCH_TIMEOUT): %s" % (STEP_TIMEOUT_S, " ".join(cmd)))
    if r.returncode and crash_retries and "terminated with signal" in r.stderr:
        log("measured_bench: a torch worker died by a signal; running it "
            "again: %s\n%s" % (" ".join(cmd), r.stderr[-1000:]))
        return run(cmd, env, quiet, crash_retries - 1)
    if r.returncode:
        sys.stderr.write("measured_bench: FAILED (%d): %s\n%s%s" % (
            r.returncode, " ".join(cmd), r.stdout[-4000:], r.stderr[-4000:]))
        sys.exit(1)
    return r.stdout + ("" if quiet else r.stderr)


def tool(args, name):
    return os.path.join(args.build, "bin", name)


def median_of(out, label):
    m = re.search(r"^%s: median ([0-9.]+) s" % re.escape(label), out, re.M)
    if not m:
        sys.exit("measured_bench: no median from %s in:\n%s" % (label, out))
    return float(m.group(1))


def verify(args, layout, out_dir):
    out = run([tool(args, "reshard-run"), layout, "--verify", out_dir, "--pattern=hash"])
    line = out.strip().splitlines()[-1]
    if "all correct" not in line:
        sys.exit("measured_bench: verification failed: " + out)
    return line


def compile_plan(args, layout, work):
    """Plans, lowers and compiles the layout; returns (program, report)."""
    cpp = os.path.join(work, "plan.cpp")
    report = os.path.join(work, "report.json")
    run([tool(args, "reshard-compile"), layout, "--backend=mpi",
         "--plan-name=refit", "-o", cpp, "--report=" + report])
    report = json.load(open(report))
    exe = os.path.join(work, "reshard_timed")
    run(["mpicxx", "-O2", "-std=c++17", "-I" + os.path.join(ROOT, "include"),
         "-I" + MEASURED, cpp, os.path.join(MEASURED, "reshard_timed.cpp"),
         "-o", exe])
    return exe, report


def inter_rank_bytes(report):
    p = report["plan"]
    return p["nvlink_bytes"] + p["network_bytes"]


def mpi_scenario(args, name, gb_exe, work):
    model = SCENARIOS[name]
    m = EIGHT_RANKS[model]
    layers = args.layers or m["layers"]
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    layout = os.path.join(d, "layout.json")
    run([sys.executable, os.path.join(ROOT, "bench", "make_refit_scenario.py"),
         "--scenario", name, "--train", m["train"], "--infer", m["infer"],
         "--colocated", "--layers", str(layers), "--scale-down",
         str(args.scale_down), "--out", layout])
    with open(layout) as f:
        data = json.load(f)
    full_bytes = sum(gather_table.DTYPE_BYTES[t["dtype"]] *
                     _prod(t["shape"]) for t in data["tensors"])
    log("%s: %d tensors, %.1f MB; compiling the plan" % (
        name, len(data["tensors"]), full_bytes / 1e6))
    exe, report = compile_plan(args, layout, d)
    src = os.path.join(d, "in")
    os.makedirs(src, exist_ok=True)
    run([tool(args, "reshard-run"), layout, "--make-sources", src, "--pattern=hash"])
    # The baseline twice: broadcast to each tensor's destination ranks, and
    # to every inference rank (the classic path); the second only where it
    # differs (some tensor is not needed by every inference rank).
    # reshard twice too: as it runs (large segments in place), and with
    # every message packed through the staging area (RESHARD_MPI_DIRECT_MIN
    # =0, the engine before in-place parts), the ratio of the two measured
    # in the same rounds.
    programs = [("reshard", "reshard", [exe], MPI_ENV),
                ("packed", "reshard", [exe],
                 dict(MPI_ENV, RESHARD_MPI_DIRECT_MIN="0"))]
    for variant, flags in (("dst", []), ("all", ["--broadcast-all"])):
        table = os.path.join(d, "gather-%s.table" % variant)
        gather_table.main([layout, "--out", table, "--bucket-bytes",
                           str(args.bucket_bytes)] + flags)
        with open(table) as f:
            if variant == "all" and not re.search(r" extra [1-9]", f.read()):
                continue
        programs.append((variant, "gather-bcast", [gb_exe, table], MPI_ENV))
    # Rounds alternate the programs so that a change in the machine's load
    # (it is shared) does not fall on one program only.
    times = {key: [] for key, _, _, _ in programs}
    outs = {}
    for rnd in range(args.rounds):
        for key, label, cmd, env in programs:
            out = os.path.join(d, "out." + key)
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            log("%s: round %d: %s" % (name, rnd + 1, SHOWN.get(
                key, "gather+broadcast to " + key)))
            o = run(MPIRUN + ["-np", "8"] + cmd + ["--src", src, "--dst", out,
                                                  "--reps", str(args.reps)],
                    env=env)
            save(d, "%s.round%d.log" % (key, rnd + 1), o)
            times[key] += rep_times(o, label)
            outs[key] = (out, o)
    row = dict(scenario=name, model=model, train=m["train"], infer=m["infer"],
               layers=layers, tensors=len(data["tensors"]),
               full_mb=full_bytes / 1e6,
               reshard_mb=inter_rank_bytes(report) / 1e6)
    for key, label, _, _ in programs:
        out, o = outs[key]
        line = verify(args, layout, out)  # the last round's destinations
        print("%s: %s verify: %s" % (name, SHOWN.get(key, "gather-bcast-" + key),
                                     line))
        ts = times[key]
        print("%s: %s: %d reps: median %.4f s, min %.4f, max %.4f" % (
            name, key, len(ts), statistics.median(ts), min(ts), max(ts)))
        row[key + "_s"] = statistics.median(ts)
        if label != "reshard":
            row[key + "_mb"] = int(re.search(r"(\d+) bytes delivered",
                                             o).group(1)) / 1e6
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    if "all_s" not in row:
        row["all_s"], row["all_mb"] = row["dst_s"], row["dst_mb"]
    if not args.keep:
        shutil.rmtree(src, ignore_errors=True)
    return row


# How the log and the verify lines name the programs (others: gather+
# broadcast to `key`).
SHOWN = {"reshard": "reshard", "packed": "reshard packed"}


def rep_times(out, label):
    ts = [float(x) for x in re.findall(r"^%s: rep \d+: ([0-9.]+) s$" %
                                       re.escape(label), out, re.M)]
    if not ts:
        sys.exit("measured_bench: no times from %s in:\n%s" % (label, out))
    return ts


def save(d, name, text):
    """Keeps a run's output (every repetition's time) in the work folder."""
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def dtensor_case(args, case, work):
    d = os.path.join(work, "dtensor-" + case)
    os.makedirs(d, exist_ok=True)
    layout = os.path.join(d, "layout.json")
    with open(layout, "w") as f:
        json.dump(dtensor_bench.case_layout(case), f)
    world = _prod(dtensor_bench.CASES[case][0])
    exe, report = compile_plan(args, layout, d)
    src, out_r = os.path.join(d, "in"), os.path.join(d, "out")
    for o in (src, out_r):
        shutil.rmtree(o, ignore_errors=True)
        os.makedirs(o)
    run([tool(args, "reshard-run"), layout, "--make-sources", src, "--pattern=hash"])
    log("dtensor %s: reshard's plan, %d processes" % (case, world))
    r_out = run(MPIRUN + ["-np", str(world), exe, "--src", src, "--dst", out_r,
                          "--reps", str(args.reps)], env=MPI_ENV)
    save(d, "reshard.log", r_out)
    r_check = verify(args, layout, out_r)
    row = dict(case=case, world=world,
               mesh="x".join(map(str, dtensor_bench.CASES[case][0])),
               shape="x".join(map(str, dtensor_bench.CASES[case][1])),
               reshard_mb=inter_rank_bytes(report) / 1e6,
               reshard_s=median_of(r_out, "reshard"))
    print("dtensor %s: reshard verify: %s" % (case, r_check))
    if args.torch_python:
        log("dtensor %s: DTensor redistribute over gloo, %d processes" %
            (case, world))
        out = run([args.torch_python,
                   os.path.join(MEASURED, "dtensor_bench.py"), "--case", case,
                   "--reps", str(args.reps)], quiet=True, crash_retries=1)
        save(d, "dtensor.log", out)
        m = re.search(r"^dtensor \S+: median ([0-9.]+) s .*bytes (\d+), "
                      r"collectives (\{.*\}), check: (.*)$", out, re.M)
        if not m or not m.group(4).startswith("all correct"):
            sys.exit("measured_bench: DTensor run failed:\n" + out)
        print("dtensor %s: DTensor verify: %s" % (case, m.group(4)))
        row.update(dtensor_s=float(m.group(1)),
                   dtensor_mb=int(m.group(2)) / 1e6,
                   collectives=m.group(3).replace("'", ""))
    return row


def find_torch_python(explicit):
    cands = [explicit] if explicit else [
        os.environ.get("RESHARD_TORCH_PYTHON"),
        os.path.join(ROOT, "build", "bench-venv", "bin", "python"),
        sys.executable]
    for py in filter(None, cands):
        if shutil.which(py) or os.path.exists(py):
            r = subprocess.run([py, "-c", "import torch.distributed as d; "
                                "assert d.is_gloo_available()"],
                               capture_output=True)
            if r.returncode == 0:
                return py
        if explicit:
            sys.exit("measured_bench: %s cannot import torch with gloo" % py)
    return None


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true",
                   help="one tiny scenario and one tiny DTensor case, 1 rep")
    p.add_argument("--scenario", action="append", choices=sorted(SCENARIOS),
                   help="scenario(s) to run (default: all six)")
    p.add_argument("--reps", type=int, default=3,
                   help="timed repetitions per run (after one warm-up)")
    p.add_argument("--rounds", type=int, default=3,
                   help="runs of each MPI program, alternated (the median "
                        "is over rounds x reps)")
    p.add_argument("--layers", type=int,
                   help="transformer layers kept (default per model: "
                        "llama 4, qwen 4, deepseek 6)")
    p.add_argument("--scale-down", type=int, default=8,
                   help="hidden-like dims divided by F (default 8)")
    p.add_argument("--bucket-bytes", type=int, default=0,
                   help="gather+broadcast packs consecutive tensors with the "
                        "same destinations up to this many bytes (default 0: "
                        "one tensor per broadcast)")
    p.add_argument("--dtensor-case", action="append",
                   choices=sorted(dtensor_bench.CASES))
    p.add_argument("--torch-python", help="a python that imports torch "
                   "(default: $RESHARD_TORCH_PYTHON, build/bench-venv, this one)")
    p.add_argument("--no-dtensor", action="store_true")
    p.add_argument("--no-mpi", action="store_true")
    p.add_argument("--work", help="keep the work files here")
    p.add_argument("--keep", action="store_true",
                   help="keep shard files in --work")
    p.add_argument("--build", default=os.environ.get(
        "RESHARD_BUILD", os.path.join(ROOT, "build")))
    args = p.parse_args()
    if args.smoke:
        args.scenario = args.scenario or ["llama70b-dgx"]
        args.reps = 1 if args.reps == 3 else args.reps
        args.rounds = 1 if args.rounds == 3 else args.rounds
        args.layers = args.layers or 2
        args.scale_down = 64 if args.scale_down == 8 else args.scale_down
        args.dtensor_case = args.dtensor_case or ["tp4-smoke"]
    scenarios = args.scenario or list(SCENARIOS)
    cases = args.dtensor_case or [c for c in dtensor_bench.CASES
                                  if c != "tp4-smoke"]
    work = args.work or tempfile.mkdtemp(prefix="measured-bench-")
    os.makedirs(work, exist_ok=True)
    try:
        if not args.no_mpi:
            gb = os.path.join(work, "gather_bcast")
            run(["mpicxx", "-O2", "-std=c++17", "-I" + MEASURED,
                 "-I" + os.path.join(ROOT, "include"),
                 os.path.join(MEASURED, "gather_bcast.cpp"), "-o", gb])
            rows = [mpi_scenario(args, s, gb, work) for s in scenarios]
            print()
            print("8 MPI processes (Open MPI, shared memory: btl self,vader; "
                  "mpi_yield_when_idle 1) on %d cores; --scale-down %d; "
                  "median of %d rounds x %d reps (after a warm-up each); G+B = gather+broadcast, to each tensor's "
                  "destination ranks (dst) or to every inference rank (all), "
                  "buckets: %s; reshard packed = the same plan with "
                  "RESHARD_MPI_DIRECT_MIN=0 (every message through the "
                  "staging area)" % (
                      os.cpu_count(), args.scale_down, args.rounds, args.reps,
                      "%d bytes" % args.bucket_bytes if args.bucket_bytes
                      else "one tensor each"))
            print()
            print("| scenario | train -> infer (8 colocated ranks) | layers "
                  "| tensors | MB | MB moved: reshard / G+B dst / G+B all "
                  "| reshard s | G+B dst s | G+B all s "
                  "| G+B dst / reshard | G+B all / reshard "
                  "| reshard packed s | packed / reshard |")
            print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
            for r in rows:
                print("| %s | %s -> %s | %d | %d | %.1f | %.1f / %.1f / %.1f "
                      "| %.4f | %.4f | %.4f | %.2fx | %.2fx | %.4f | %.2fx |" % (
                          r["scenario"], r["train"], r["infer"], r["layers"],
                          r["tensors"], r["full_mb"], r["reshard_mb"],
                          r["dst_mb"], r["all_mb"], r["reshard_s"],
                          r["dst_s"], r["all_s"], r["dst_s"] / r["reshard_s"],
                          r["all_s"] / r["reshard_s"], r["packed_s"],
                          r["packed_s"] / r["reshard_s"]))
            print()
        if not args.no_dtensor:
            args.torch_python = find_torch_python(args.torch_python)
            if not args.torch_python:
                print("DTensor: skipped, no python with torch (run "
                      "bench/setup-bench.sh or pass --torch-python)")
            drows = [dtensor_case(args, c, work) for c in cases]
            print()
            version = "(skipped)"
            if args.torch_python:
                version = run([args.torch_python, "-c", "import torch; "
                               "print(torch.__version__)"], quiet=True).strip()
            print("Same mesh, same process count; fp32; median of %d reps; "
                  "reshard: generated MPI plan (Open MPI, shared memory); "
                  "DTensor: torch %s redistribute over gloo (CPU)" % (
                      args.reps, version))
            print()
            print("| case | mesh | shape | reshard MB moved | DTensor MB "
                  "moved | DTensor collectives | reshard s (MPI) "
                  "| DTensor s (gloo) | DTensor / reshard |")
            print("|---|---|---|---|---|---|---|---|---|")
            for r in drows:
                has = "dtensor_s" in r
                print("| %s | %s | %s | %.2f | %s | %s | %.4f | %s | %s |" % (
                    r["case"], r["mesh"], r["shape"], r["reshard_mb"],
                    "%.2f" % r["dtensor_mb"] if has else "-",
                    r["collectives"] if has else "-", r["reshard_s"],
                    "%.4f" % r["dtensor_s"] if has else "-",
                    "%.2fx" % (r["dtensor_s"] / r["reshard_s"]) if has
                    else "-"))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
