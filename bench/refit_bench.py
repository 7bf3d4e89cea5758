#!/usr/bin/env python3
"""The refit table: for each bundled whole-model scenario (Megatron training
layout -> vLLM inference layout, on DGX H100 and GB200 NVL72), the network
bytes against their lower bound, the busiest NIC against its bound, the
modelled time against the lower-bound time, the two baselines, and how long
planning took on this machine.

  python3 bench/refit_bench.py [--build build] [--scenarios NAME,...]
      [--staging-budget BYTES] [--json FILE]

Each figure is measured in this run; wall times are on this machine.
"""
import argparse
import json
import os
import sys
import tempfile

from timing import pass_times, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BYTE_FIELDS = ("network_bytes", "nvlink_bytes", "busiest_nic_in_bytes",
               "busiest_nic_out_bytes", "busiest_nic_bytes")
SCENARIOS = ["llama70b-dgx", "qwen235b-dgx", "deepseek-v3-dgx",
             "llama70b-gb200", "qwen235b-gb200", "deepseek-v3-gb200"]


def print_bytes(rows):
    """Bytes per link class for reshard and both baselines, against the
    bounds (network: every needed element not already in the destination's
    NVLink domain crosses into it once; NIC: the busiest NIC's share)."""
    print("\nBytes (GB) per plan: network, NVLink, busiest NIC in / out, "
          "network lower bound, ratios to the bounds")
    print("| scenario | plan | network | NVLink | NIC in | NIC out | lower bound "
          "| network / LB | busiest NIC / its bound |")
    print("|---|---|---|---|---|---|---|---|---|")
    for x in rows:
        lb, nic_lb = x["lower_bound_network_bytes"], x["lower_bound_busiest_nic_bytes"]
        for plan, b in x["bytes"].items():
            print("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f | %.3f |" % (
                x["scenario"], plan, b["network_bytes"] / 1e9,
                b["nvlink_bytes"] / 1e9, b["busiest_nic_in_bytes"] / 1e9,
                b["busiest_nic_out_bytes"] / 1e9, lb / 1e9,
                b["network_bytes"] / lb if lb else float("nan"),
                b["busiest_nic_bytes"] / nic_lb if nic_lb else float("nan")))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--staging-budget", type=int, default=256 << 20)
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    opt = os.path.join(args.build, "bin", "reshard-opt")
    translate = os.path.join(args.build, "bin", "reshard-translate")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.scenarios.split(","):
            layout = os.path.join(tmp, name + ".json")
            run([sys.executable, os.path.join(HERE, "make_refit_scenario.py"),
                 "--scenario", name, "--out", layout], "make_refit_scenario")
            mlir = os.path.join(tmp, name + ".mlir")
            t_import, _, _, _, _ = run([translate, "--import-layout-json", layout,
                                        "-o", mlir], "import")
            report = os.path.join(tmp, name + ".report.json")
            pipeline = ("builtin.module(reshard-plan-pipeline{lower=false "
                        "staging-budget=%d},"
                        "reshard-report{format=json per-rank=false output=%s})"
                        % (args.staging_budget, report))
            t_plan, rss, _, timing, _ = run([opt, mlir, "--pass-pipeline=" + pipeline,
                                             "-mlir-timing", "-o", "/dev/null"], "plan")
            passes = pass_times(timing)
            r = json.load(open(report))
            p, b = r["plan"], r["baselines"]
            rows.append({
                "scenario": name, "tensors": r["tensors"], "pieces": r["pieces"],
                "network_bytes": r["network_bytes"],
                "lower_bound_network_bytes": r["lower_bound_network_bytes"],
                "busiest_nic_bytes": r["busiest_nic_bytes"],
                "lower_bound_busiest_nic_bytes": r["lower_bound_busiest_nic_bytes"],
                "estimated_seconds": r["estimated_seconds"],
                "lower_bound_seconds": r["lower_bound_seconds"],
                "steps": p["steps"],
                "direct_seconds": b["direct"]["estimated_seconds"],
                "direct_network_bytes": b["direct"]["network_bytes"],
                "gather_broadcast_seconds": b["gather-broadcast"]["estimated_seconds"],
                "gather_broadcast_network_bytes": b["gather-broadcast"]["network_bytes"],
                "import_seconds": t_import,
                "plan_wall_seconds": t_plan,
                "intersect_seconds": passes.get("ReshardIntersect", 0),
                "route_seconds": passes.get("ReshardSelectSources", 0),
                "schedule_seconds": passes.get("ReshardSchedule", 0),
                "plan_peak_mib": rss,
                # Bytes per link class of the plan and of both baselines.
                "bytes": {k: {f: v[f] for f in BYTE_FIELDS}
                          for k, v in (("reshard", p), ("direct", b["direct"]),
                                       ("gather-broadcast", b["gather-broadcast"]))},
            })
    fmt = ("{:<18} {:>7} {:>8} {:>10} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>9} {:>7} {:>7}")
    print("Refit plans (figures from the cost model of docs/CostModel.md; "
          "staging budget %d MiB)" % (args.staging_budget >> 20))
    print(fmt.format("scenario", "tensors", "pieces", "net GB", "net/LB",
                     "NIC/LB", "est s", "est/LB", "steps", "x direct",
                     "x gat-bc", "route s", "sched s"))
    for x in rows:
        ratio = lambda a, b: a / b if b else float("nan")
        print(fmt.format(
            x["scenario"], x["tensors"], x["pieces"],
            "%.1f" % (x["network_bytes"] / 1e9),
            "%.3f" % ratio(x["network_bytes"], x["lower_bound_network_bytes"]),
            "%.3f" % ratio(x["busiest_nic_bytes"], x["lower_bound_busiest_nic_bytes"]),
            "%.3f" % x["estimated_seconds"],
            "%.3f" % ratio(x["estimated_seconds"], x["lower_bound_seconds"]),
            x["steps"],
            "%.2f" % ratio(x["direct_seconds"], x["estimated_seconds"]),
            "%.2f" % ratio(x["gather_broadcast_seconds"], x["estimated_seconds"]),
            "%.2f" % x["route_seconds"], "%.2f" % x["schedule_seconds"]))
    print("\nplanning wall time (parse, intersect, route, schedule, report) and peak memory:")
    for x in rows:
        print("  %-18s import %.2f s, plan %.2f s (intersect %.2f, route %.2f, "
              "schedule %.2f), %.0f MiB" % (x["scenario"], x["import_seconds"],
                                            x["plan_wall_seconds"], x["intersect_seconds"],
                                            x["route_seconds"], x["schedule_seconds"],
                                            x["plan_peak_mib"]))
    print_bytes(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
