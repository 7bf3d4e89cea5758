#!/usr/bin/env python3
"""Modelled refit time against the physical lower bound (docs/CostModel.md)
for every bundled scenario, next to the refit times peers publish.

For each scenario: reshard-compile plans it (staging budget 256 MiB) and
writes its report; the table gives the cost model's time, the physical
bound and the term that sets it, their ratio, the busiest NIC against its
bound, and the published time of that layout where one exists. `--plot
DIR` also draws, for the scenario furthest from its bound, the per-NIC
load against the bound (DIR/<scenario>-nic.png and .svg; needs
matplotlib). `--simulate` also replays each lowered plan in the SimGrid
simulation of bench/sim_bench.py (bench/simgrid/refit_sim.cpp, see
bench/Simulation.md) and adds the simulated time and its ratio to the
bound; it checks that the replay moves the report's network bytes and
takes no less than the bound. The replay follows the NCCL backend (one
group per step) unless `--backend mpi` (with plans made with
`--receives-ahead`: the next step's receives posted while a step is in
flight). `--simulator fluid` replays in bench/replay/refit_fluid.cpp
instead, SimGrid's model on a max-min solver of its own that takes minutes
where SimGrid takes hours (NeMo RL's DeepSeek-V3: 2 minutes); `both` runs
the two and fails where they differ by more than 1e-6 of the time.

    python3 bench/bound_bench.py                 # all scenarios, ~1 min
    python3 bench/bound_bench.py --simulate      # and SimGrid's times
    python3 bench/bound_bench.py --simulate --simulator fluid  # the big ones too
    python3 bench/bound_bench.py --plot out/     # and the worst one's figure
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

from reshard.refit import SCENARIOS  # noqa: E402
from sim_bench import replay_plan  # noqa: E402

NEMO_RL = ("NeMo RL performance summary, "
           "docs.nvidia.com/nemo/rl/latest/about/performance-summary.html")
M2N = "NVIDIA's NCCL M2N Reshard benchmark (GB200)"
# Published refit times of the layouts the scenarios copy.
PUBLISHED = {
    "deepseek-v3-nemo-rl": ("2.39-2.83 s (H100); 1.93-2.59 s on GB200",
                            NEMO_RL),
    "deepseek-v3-m2n-gb200": ("1.447 s", M2N),
    "qwen235b-m2n-gb200": ("0.989 s", M2N),
}


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode:
        sys.exit("bound_bench: %s failed:\n%s" % (" ".join(cmd), p.stderr))
    return p.stdout


def scenario_report(name, tmp, build, budget, layers, mlir=None,
                    relay_tree=None, receives_ahead=False, transits=None):
    layout = os.path.join(tmp, name + ".json")
    cmd = [sys.executable, os.path.join(HERE, "make_refit_scenario.py"),
           "--scenario", name, "--out", layout]
    if layers:
        cmd += ["--layers", str(layers)]
    run(cmd)
    report = os.path.join(tmp, name + ".report.json")
    cmd = [os.path.join(build, "bin", "reshard-compile"), layout,
           "--staging-budget=%d" % budget, "--report=" + report]
    if relay_tree:
        cmd.append("--relay-tree=" + relay_tree)
    if transits:
        cmd.append("--transits=" + transits)
    if receives_ahead:
        cmd.append("--receives-ahead")
    cmd += (["--emit=none"] if mlir is None else ["--emit=mlir", "-o", mlir])
    run(cmd)
    with open(report) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--staging-budget", type=int, default=256 << 20)
    ap.add_argument("--relay-tree", choices=["auto", "never", "bound", "always"],
                    help="reshard-compile's --relay-tree (default: its own)")
    ap.add_argument("--transits", choices=["auto", "always", "never"],
                    help="reshard-compile's --transits (default: its own)")
    ap.add_argument("--layers", type=int,
                    help="keep the first N layers (a smoke run)")
    ap.add_argument("--simulate", nargs="?", const="all", metavar="LIST",
                    help="also replay the plans of these scenarios (default: "
                    "all) in SimGrid (needs libsimgrid-dev; "
                    "bench/Simulation.md)")
    ap.add_argument("--simulator", choices=["simgrid", "fluid", "both"],
                    default="simgrid",
                    help="the replay: SimGrid, the same model on its own "
                    "solver (fluid: minutes where SimGrid takes hours), or "
                    "both (checked to agree within 1e-6)")
    ap.add_argument("--quantum", type=float, default=0, metavar="SECONDS",
                    help="the fluid replay takes completions on a grid of "
                    "this many seconds (refit_fluid --quantum; default 0: "
                    "exact): Kimi-K2 in minutes instead of hours, each "
                    "flow up to that late (bench/Simulation.md)")
    ap.add_argument("--receives-ahead", action="store_true",
                    help="plan with reshard-compile --receives-ahead (the "
                    "budget counts the next step's receives)")
    ap.add_argument("--backend", choices=["nccl", "mpi"], default="nccl",
                    help="the runtime the replay follows: nccl (one group "
                    "per step) or mpi (the next step's receives posted "
                    "ahead; docs/Runtime.md)")
    ap.add_argument("--plot", metavar="DIR",
                    help="draw the worst scenario's per-NIC load here")
    args = ap.parse_args()
    simulate = args.simulate.split(",") if args.simulate else []
    simulators = ["simgrid", "fluid"] if args.simulator == "both" \
        else [args.simulator]
    if args.quantum and args.simulator != "fluid":
        ap.error("--quantum is for --simulator fluid (the exact replays "
                 "agree within 1e-6; a quantum moves the fluid one)")
    if not 0 <= args.quantum <= 1:
        ap.error("--quantum SECONDS in [0, 1]")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.scenarios.split(","):
            mlir = os.path.join(tmp, name + ".plan.mlir") \
                if name in simulate or "all" in simulate else None
            r = scenario_report(name, tmp, args.build, args.staging_budget,
                                args.layers, mlir=mlir,
                                relay_tree=args.relay_tree,
                                receives_ahead=args.receives_ahead,
                                transits=args.transits)
            sim = replay_plan(args.build, mlir, r, name, args.backend,
                              simulators, args.quantum) if mlir else None
            rows.append((name, r, sim))
        print("### Modelled time against the physical bound "
              "(staging budget %d MiB%s%s)\n" % (
                  args.staging_budget >> 20,
                  ", %d layers" % args.layers if args.layers else "",
                  ", transits=" + args.transits if args.transits else ""))
        simcols = "simulated s | simulated / bound | " if args.simulate else ""
        print("| scenario | steps | modelled s | %sphysical bound s | "
              "bound set by | modelled / bound | busiest NIC / its bound "
              "| published |" % simcols)
        print("|---|---|---|---|---|---|---|---|" +
              ("---|---|" if args.simulate else ""))
        for name, r, sim in rows:
            t = r["lower_bound_terms"][r["lower_bound_term"]] \
                if r["lower_bound_term"] != "none" else None
            where = ""
            if t is not None and "domain" in t:
                where = " (domain %d, %d NICs)" % (t["domain"], t["gpus"])
            elif t is not None and "rank" in t:
                where = " (rank %d)" % t["rank"]
            ratios = r["ratios"]
            # A cut-down model is not the layout the figure is for.
            pub = None if args.layers else PUBLISHED.get(name)
            simfig = "" if not args.simulate else "- | - | " if not sim else \
                "%.4f | %.3f | " % (
                    sim["simulated_seconds"],
                    sim["simulated_seconds"] / r["lower_bound_seconds"])
            print("| %s | %d | %.4f | %s%.4f | %s%s | %.3f | %.3f | %s |" % (
                name, r["plan"]["steps"], r["estimated_seconds"], simfig,
                r["lower_bound_seconds"], r["lower_bound_term"], where,
                ratios["estimated_over_lower_bound_seconds"] or 0,
                ratios["busiest_nic_over_lower_bound"] or 0,
                "%s (%s)" % pub if pub else "-"))
        label = {"simgrid": "SimGrid", "fluid": "fluid"}.get
        for i, x in enumerate(simulators if args.simulate else []):
            grid = " with completions on a %g s grid" % args.quantum \
                if args.quantum else ""
            against = "; its time / %s's" % label(simulators[0]) if i else ""
            runs = []
            for name, _, s in rows:
                if not s:
                    continue
                own = s[x] if i else s
                ratio = " / %.9f" % (own["simulated_seconds"] /
                                     s["simulated_seconds"]) if i else ""
                runs.append("%s %.0f s / %.0f MiB%s" % (
                    name, own["sim_wall_seconds"], own["sim_peak_mib"], ratio))
            print("\n%s replay of the %s backend%s (wall time, peak memory%s): "
                  % (label(x), args.backend, grid, against) + ", ".join(runs))
        if args.plot:
            worst = max(rows, key=lambda x: x[1]["ratios"][
                "estimated_over_lower_bound_seconds"] or 0)[0]
            os.makedirs(args.plot, exist_ok=True)
            mlir = os.path.join(tmp, worst + ".plan.mlir")
            scenario_report(worst, tmp, args.build, args.staging_budget,
                            args.layers, mlir=mlir,
                            relay_tree=args.relay_tree,
                            transits=args.transits)
            from reshard import plot
            from reshard.report import Report
            report = Report.load(os.path.join(tmp, worst + ".report.json"))
            paths = [os.path.join(args.plot, worst + "-nic." + ext)
                     for ext in ("png", "svg")]
            plot.draw(mlir, report, paths, title=worst)
            print("\nper-NIC load of %s: %s" % (worst, ", ".join(paths)))


if __name__ == "__main__":
    main()
