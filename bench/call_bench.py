#!/usr/bin/env python3
"""What one call of a generated MPI plan costs besides moving bytes: the
argument checks (null pointers, workspace, the overlap check over every
shard of the rank), the agreement and the step walk, on a plan of many tiny
tensors, where they dominate.

  bench/call_bench.py [--tensors 20000] [--calls 200] [--ranks 2]
      [--baseline REV] [--shuffled] [--smoke]

Compiles one plan with reshard-compile, then its driver twice: against
this tree's engine headers and against those of git revision REV (default
d1dee20, before the overlap check and the 7-word agreement), and runs both
under mpirun in the same invocation. Prints rank 0's median time per call
of each and their ratio. No assertion on times: the machine is shared,
compare the ratio. The shards lie in one arena in tensor order, as
buffers allocated one after another do (the overlap check then finds them
sorted), or with --shuffled in random order (it sorts them).
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl": "self,vader", "OMPI_MCA_pml": "ob1",
           "OMPI_MCA_oob_tcp_if_include": "lo", "HWLOC_COMPONENTS": "-gl",
           "OMPI_MCA_mpi_yield_when_idle": "1"}

# Times `calls` calls of the plan (after 5 unmeasured), each timed alone
# between barriers; rank 0 prints the median in microseconds.
DRIVER = r"""
#include "plan.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, calls = std::atoi(argv[1]), shuffled = std::atoi(argv[2]);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = reshard_plan_num_tensors();
  // Slot k of the arena holds shard order[k]: source 2t, destination 2t+1.
  std::vector<long long> bytes(2 * n), at(2 * n);
  std::vector<int> order(2 * n);
  for (int t = 0; t < n; ++t) {
    long long s = reshard_plan_src_bytes(rank, t), d =
        reshard_plan_dst_bytes(rank, t);
    bytes[2 * t] = s > 0 ? s : 0;
    bytes[2 * t + 1] = d > 0 ? d : 0;
  }
  for (int k = 0; k < 2 * n; ++k)
    order[k] = k;
  if (shuffled)
    std::shuffle(order.begin(), order.end(), std::mt19937(7));
  long long total = 0;
  for (int k = 0; k < 2 * n; ++k) {
    at[order[k]] = total;
    total += (bytes[order[k]] + 15) / 16 * 16;
  }
  std::vector<char> arena(total + 16, 1);
  std::vector<void *> sp(n), dp(n);
  for (int t = 0; t < n; ++t) {
    sp[t] = bytes[2 * t] ? arena.data() + at[2 * t] : nullptr;
    dp[t] = bytes[2 * t + 1] ? arena.data() + at[2 * t + 1] : nullptr;
  }
  std::vector<char> ws(reshard_plan_workspace_bytes(rank) + 1);
  std::vector<double> us;
  char err[512];
  for (int i = 0; i < calls + 5; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = std::chrono::steady_clock::now();
    int rc = reshard_plan_run(rank, sp.data(), dp.data(), MPI_COMM_WORLD,
                              nullptr, ws.data(), ws.size(), err, sizeof err);
    auto t1 = std::chrono::steady_clock::now();
    if (rc) {
      std::fprintf(stderr, "rank %d: rc %d: %s\n", rank, rc, err);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (i >= 5)
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  if (rank == 0)
    std::printf("%.1f\n", us[us.size() / 2]);
  MPI_Finalize();
  return 0;
}
"""


def layout(tensors, ranks):
    """Tiny fp32 [4, 8] tensors, rows over `ranks` ranks to columns over
    the same ranks reversed: every rank sends, receives and copies."""
    lines = ['{"meshes": {',
             f'  "a": {{"shape": [{ranks}], "axes": ["x"], '
             f'"ranks": {list(range(ranks))}}},',
             f'  "b": {{"shape": [{ranks}], "axes": ["x"], '
             f'"ranks": {list(reversed(range(ranks)))}}}}},',
             ' "tensors": [']
    for t in range(tensors):
        comma = "," if t + 1 < tensors else ""
        lines.append(f'  {{"name": "t{t}", "shape": [4, 8], "dtype": "fp32", '
                     f'"src": {{"mesh": "a", "dims": [["x"], []]}}, '
                     f'"dst": {{"mesh": "b", "dims": [[], ["x"]]}}}}{comma}')
    lines.append(" ]}")
    return "\n".join(lines) + "\n"


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit(f"{' '.join(cmd[:3])} ...: exit {r.returncode}\n"
                 f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tensors", type=int, default=20000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--baseline", default="d1dee20")
    ap.add_argument("--shuffled", action="store_true",
                    help="shards in random address order")
    ap.add_argument("--smoke", action="store_true",
                    help="100 tensors, 5 calls: checks the bench runs")
    a = ap.parse_args()
    if a.smoke:
        a.tensors, a.calls = 100, 5
    bindir = os.environ.get("RESHARD_BIN",
                            os.path.join(ROOT, "build", "bin"))
    env = dict(os.environ, **MPI_ENV)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "layout.json"), "w") as f:
            f.write(layout(a.tensors, a.ranks))
        run([os.path.join(bindir, "reshard-compile"),
             os.path.join(tmp, "layout.json"), "--backend=mpi",
             "-o", os.path.join(tmp, "plan.cpp"),
             "--header=" + os.path.join(tmp, "plan.h")])
        with open(os.path.join(tmp, "driver.cpp"), "w") as f:
            f.write(DRIVER)
        base_inc = os.path.join(tmp, "baseline")
        os.makedirs(base_inc)
        archive = subprocess.run(
            ["git", "-C", ROOT, "archive", a.baseline, "include"],
            capture_output=True)
        if archive.returncode:
            sys.exit(f"git archive {a.baseline}: "
                     f"{archive.stderr.decode()[-500:]}")
        subprocess.run(["tar", "-x", "-C", base_inc], input=archive.stdout,
                       check=True)
        times = {}
        for label, inc in (("this tree", os.path.join(ROOT, "include")),
                           (a.baseline, os.path.join(base_inc, "include"))):
            exe = os.path.join(tmp, "run-" + label.replace(" ", "-"))
            run(["mpicxx", "-std=c++17", "-O2", "-I" + inc, "-I" + tmp,
                 os.path.join(tmp, "plan.cpp"),
                 os.path.join(tmp, "driver.cpp"), "-o", exe])
            out = run(["mpirun", "--oversubscribe", "-n", str(a.ranks), exe,
                       str(a.calls), str(int(a.shuffled))], env=env)
            times[label] = float(out.split()[-1])
        print(f"call_bench: {a.tensors} tensors of 128 bytes, {a.ranks} "
              f"ranks, shards in {'random' if a.shuffled else 'tensor'} "
              f"address order, median of {a.calls} calls (rank 0)")
        for label, us in times.items():
            print(f"  {label:>10}: {us:10.1f} us per call")
        new, old = times["this tree"], times[a.baseline]
        print(f"  ratio this tree / {a.baseline}: {new / old:.3f}")


if __name__ == "__main__":
    main()
