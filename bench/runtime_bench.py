#!/usr/bin/env python3
"""What verify=True costs: one refit run from Python (reshard.compile, then
Plan.run on torch CPU tensors under mpirun), timed without and with
verify=True in the same invocation, on real model shapes.

  bench/runtime_bench.py [--model llama-3.1-70b] [--train tp=4,pp=2,dp=1]
      [--infer tp=8,dp=1] [--layers 1] [--scale-down 1] [--reps 3]
      [--ranks 8] [--python PY] [--smoke]

Prints, per rank 0's clock (the slowest rank sets the pace, and every run
ends with the plan's own synchronisation): the median of `reps` runs of
each, their ratio, the bytes this job moved and the digest throughput.
Colocated (trainer and engine on the same ranks); MPI over shared memory.
No assertion on times: this machine is shared, compare the ratio.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl": "self,vader", "OMPI_MCA_pml": "ob1",
           "OMPI_MCA_oob_tcp_if_include": "lo", "HWLOC_COMPONENTS": "-gl",
           "OMPI_MCA_mpi_yield_when_idle": "1", "OMP_NUM_THREADS": "1"}


def worker(layout_path, reps, budget):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import torch
    from mpi4py import MPI
    import reshard
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    plan = reshard.compile(layout_path, backend="mpi", staging_budget=budget)
    src, dst, moved = {}, {}, 0
    dtypes = {"bf16": torch.bfloat16, "fp32": torch.float32}
    with open(layout_path) as f:
        layout = json.load(f)
    for t in layout["tensors"]:
        dt = dtypes[t["dtype"]]
        for side, out in (("src", src), ("dst", dst)):
            shape = plan.local_shape(t["name"], rank, side)
            if shape is not None:
                out[t["name"]] = torch.randn(shape).to(dt) if side == "src" \
                    else torch.empty(shape, dtype=dt)
                if side == "dst":
                    moved += out[t["name"]].numel() * out[t["name"]].element_size()
    times = {False: [], True: []}
    plan.run(src, dst, comm)                       # warm-up
    for _ in range(reps):
        for verify in (False, True):
            comm.Barrier()
            start = time.perf_counter()
            plan.run(src, dst, comm, verify=verify)
            comm.Barrier()
            times[verify].append(time.perf_counter() - start)
    total = comm.reduce(moved, root=0)
    if rank == 0:
        plain = statistics.median(times[False])
        checked = statistics.median(times[True])
        print(json.dumps({"ranks": comm.Get_size(), "dst_bytes": total,
                          "run_s": plain, "verify_s": checked}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="llama-3.1-70b")
    ap.add_argument("--train", default="tp=4,pp=2,dp=1")
    ap.add_argument("--infer", default="tp=8,dp=1")
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--scale-down", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--staging-budget", type=int, default=64 << 20)
    ap.add_argument("--python", default=os.path.join(
        ROOT, "build", "bench-venv", "bin", "python"))
    ap.add_argument("--smoke", action="store_true",
                    help="hidden dims / 64, one rep (a quick end-to-end run)")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], int(args.worker[1]), int(args.worker[2]))
        return
    if args.smoke:
        args.scale_down, args.reps = 64, 1
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from reshard.refit import build_layout
    lay = build_layout(args.model, args.train, args.infer, layers=args.layers,
                       scale_down=args.scale_down, colocated=True)
    ranks = len({r for m in lay.to_dict()["meshes"].values()
                 for r in m["ranks"]})
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "layout.json")
        lay.write_json(path)
        cmd = ["mpirun", "--oversubscribe", "-n", str(ranks), args.python,
               "-m", "mpi4py", os.path.abspath(__file__), "--worker", path,
               str(args.reps), str(args.staging_budget)]
        env = dict(os.environ, **MPI_ENV,
                   RESHARD_CACHE_DIR=os.path.join(work, "cache"))
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode:
            sys.exit(f"runtime_bench: mpirun failed:\n{r.stdout}{r.stderr}")
    res = json.loads([l for l in r.stdout.splitlines()
                      if l.startswith("{")][-1])
    mib = res["dst_bytes"] / 2**20
    extra = res["verify_s"] - res["run_s"]
    print(f"{args.model} {args.train} -> {args.infer}, {args.layers} "
          f"layer(s), scale-down {args.scale_down}: {res['ranks']} ranks, "
          f"{mib:.1f} MiB of destination shards")
    print(f"  run            {res['run_s']:.3f} s (median of {args.reps})")
    print(f"  run + verify   {res['verify_s']:.3f} s "
          f"(x{res['verify_s'] / res['run_s']:.2f}; verify adds "
          f"{extra:.3f} s, {mib / max(extra, 1e-9):.0f} MiB/s of "
          f"destination bytes)")


if __name__ == "__main__":
    main()
