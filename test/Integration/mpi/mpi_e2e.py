#!/usr/bin/env python3
"""Runs generated MPI code for real: random layout pairs (reshard-proptest
--max-ranks 8), planned by a random pipeline, lowered, emitted as C++,
compiled with mpicxx and run under mpirun with one process per rank; every
destination shard each process writes is checked element by element
(reshard-run --verify).

  mpi_e2e.py --bin BUILD/bin --include SRC/include --work DIR
             [--first-seed N] [--batches B] [--per-batch K]

Several random tensors share one plan, so one compile covers several cases.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

PIPELINES = [
    "reshard-intersect,reshard-select-sources,reshard-schedule",
    "reshard-intersect,reshard-select-sources,"
    "reshard-schedule{staging-budget=64 max-ops-per-step=3}",
    "reshard-intersect,reshard-select-sources{strategy=direct},"
    "reshard-schedule{staging-budget=32}",
    "reshard-intersect",
]


# Loopback and shared memory only; root is allowed (containers, CI).
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader",
               OMPI_MCA_pml="ob1", OMPI_MCA_oob_tcp_if_include="lo",
               HWLOC_COMPONENTS="-gl")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write("FAILED: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
        sys.exit(1)
    return r.stdout


def batch_ir(bin_dir, seeds):
    """One module holding the tensors of several seeds (symbols renamed).
    A plan models one cluster: every case uses the first case's topology."""
    parts = []
    for i, seed in enumerate(seeds):
        ir = run([os.path.join(bin_dir, "reshard-proptest"), "--seed", str(seed),
                  "--cases", "1", "--dump", "--max-ranks", "8"])
        ir = "\n".join(l for l in ir.splitlines() if not l.startswith("//") and
                       not (i and l.startswith("reshard.topology")))
        ir = re.sub(r"@(src2|dst2|src|dst|t\d*)\b",
                    lambda m: "@%s_%d" % (m.group(1), i), ir)
        ir = re.sub(r"@topo\b", "@topo_0", ir)
        parts.append(ir)
    return "\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--batches", type=int, default=6)
    ap.add_argument("--per-batch", type=int, default=5)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    tool = lambda name: os.path.join(args.bin, name)
    elements = 0
    for b in range(args.batches):
        seeds = [args.first_seed + b * args.per_batch + k for k in range(args.per_batch)]
        d = os.path.join(args.work, "batch%d" % b)
        for sub in ("in", "out"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        layout = os.path.join(d, "layout.mlir")
        with open(layout, "w") as f:
            f.write(batch_ir(args.bin, seeds))
        pipeline = PIPELINES[b % len(PIPELINES)]
        planned = os.path.join(d, "planned.mlir")
        run([tool("reshard-opt"), layout, "--pass-pipeline=builtin.module(%s)" % pipeline,
             "-o", planned])
        lowered = os.path.join(d, "lowered.mlir")
        run([tool("reshard-opt"), planned, "--convert-reshard-to-runtime=plan-name=batch%d" % b,
             "-o", lowered])
        ranks = int(re.search(r"num_ranks = (\d+)", open(lowered).read()).group(1))
        cpp = os.path.join(d, "plan.cpp")
        run([tool("reshard-translate"), "--reshard-to-cpp", "--backend=mpi", lowered, "-o", cpp])
        exe = os.path.join(d, "plan")
        run(["mpicxx", "-O1", "-std=c++17", "-Wall", "-Werror", "-DRESHARD_MPI_DRIVER",
             "-I", args.include, cpp, "-o", exe])
        run([tool("reshard-run"), planned, "--make-sources", os.path.join(d, "in"), "--pattern=hash"])
        # Twice: as the backend runs by default, and with every segment a
        # message of its own, in place wherever it is contiguous.
        for direct_min in (None, "1"):
            env = dict(MPI_ENV)
            if direct_min:
                env["RESHARD_MPI_DIRECT_MIN"] = direct_min
            out_dir = os.path.join(d, "out")
            shutil.rmtree(out_dir)
            os.makedirs(out_dir)
            run(["mpirun", "--oversubscribe", "-n", str(ranks), exe,
                 "--src", os.path.join(d, "in"), "--dst", out_dir],
                env=env, timeout=300)
            out = run([tool("reshard-run"), planned, "--verify", out_dir,
                       "--pattern=hash"])
            if "all correct" not in out:
                sys.stderr.write("FAILED batch %d (seeds %s, "
                                 "RESHARD_MPI_DIRECT_MIN=%s): %s" % (
                                     b, seeds, direct_min, out))
                sys.exit(1)
        elements += int(re.search(r"(\d+) destination elements", out).group(1))
        print("batch %d: seeds %d-%d, %d ranks, pipeline %s: %s" %
              (b, seeds[0], seeds[-1], ranks, pipeline, out.strip()))
    print("mpi: %d passed, 0 failed (%d destination elements checked)" %
          (args.batches, elements))


if __name__ == "__main__":
    main()
