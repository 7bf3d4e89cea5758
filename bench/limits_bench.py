#!/usr/bin/env python3
"""Limits: a 100,000-rank mesh, 1,000,000 tensors, dims near 2^62. Each
either plans within the time and memory printed here, or fails with a clear
error (printed too). Pass --tensors to scale the second case down.

  python3 bench/limits_bench.py [--build build] [--tensors 1000000]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINE = ("builtin.module(reshard-plan-pipeline{lower=false},"
            "reshard-report{per-rank=false output=%s})")


def run(label, cmd):
    rss_file = tempfile.NamedTemporaryFile("r")
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file.name] + cmd,
                       capture_output=True, text=True)
    wall = time.perf_counter() - start
    rss = int(rss_file.read().split()[-1]) / 1024
    status = "ok" if r.returncode == 0 else "FAILED (exit %d): %s" % (
        r.returncode, r.stderr.strip().splitlines()[0][:160] if r.stderr.strip() else "")
    print("  %-34s %8.2f s %8.0f MiB  %s" % (label, wall, rss, status))
    return r.returncode == 0


def plan(build, tmp, name, layout):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(layout, f, separators=(",", ":"))
    mlir = os.path.join(tmp, name + ".mlir")
    ok = run("import", [os.path.join(build, "bin", "reshard-translate"),
                        "--import-layout-json", path, "-o", mlir])
    if ok:
        report = os.path.join(tmp, name + ".report")
        ok = run("intersect, route, schedule, report",
                 [os.path.join(build, "bin", "reshard-opt"), mlir,
                  "--pass-pipeline=" + PIPELINE % report, "-o", "/dev/null"])
        if ok:
            print("   ", open(report).read().splitlines()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--tensors", type=int, default=1000000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        n = 100000
        print("100,000-rank mesh (1 tensor of 400,000 x 64 f32 rows over 100,000 "
              "ranks -> columns over 64 of them):")
        plan(args.build, tmp, "ranks", {
            "meshes": {"big": {"shape": [n], "axes": ["x"], "ranks": list(range(n))},
                       "small": {"shape": [64], "axes": ["y"], "ranks": list(range(64))}},
            "topology": {"gpus_per_node": 8, "nvl_domain_size": 8,
                         "nic_GBps_per_gpu": 50, "nvlink_GBps_per_gpu": 450},
            "tensors": [{"name": "w", "shape": [4 * n, 64], "dtype": "fp32",
                         "src": {"mesh": "big", "dims": [["x"], []]},
                         "dst": {"mesh": "small", "dims": [[], ["y"]]}}]})
        t = args.tensors
        print("%d tensors (1024 x 1024 bf16 each, TP8 rows on ranks 0-7 -> TP8 "
              "rows on ranks 8-15: 8 pieces per tensor):" % t)
        plan(args.build, tmp, "tensors", {
            "meshes": {"a": {"shape": [8], "axes": ["tp"], "ranks": list(range(8))},
                       "b": {"shape": [8], "axes": ["tp"], "ranks": list(range(8, 16))}},
            "topology": {"gpus_per_node": 8, "nvl_domain_size": 8,
                         "nic_GBps_per_gpu": 50, "nvlink_GBps_per_gpu": 450},
            "tensors": [{"name": "t%d" % i, "shape": [1024, 1024], "dtype": "bf16",
                         "src": {"mesh": "a", "dims": [["tp"], []]},
                         "dst": {"mesh": "b", "dims": [["tp"], []]}} for i in range(t)]})
        big = (1 << 62) - 1
        print("dims near 2^62 (int8 [2^62 - 1] over 4 -> 3 ranks; and [2^62, 2] "
              "which overflows 2^63 bytes):")
        plan(args.build, tmp, "dims", {
            "meshes": {"a": {"shape": [4], "axes": ["x"], "ranks": [0, 1, 2, 3]},
                       "b": {"shape": [3], "axes": ["x"], "ranks": [4, 5, 6]}},
            "tensors": [{"name": "huge", "shape": [big], "dtype": "int8",
                         "src": {"mesh": "a", "dims": [["x"]]},
                         "dst": {"mesh": "b", "dims": [["x"]]}}]})
        plan(args.build, tmp, "overflow", {
            "meshes": {"a": {"shape": [4], "axes": ["x"], "ranks": [0, 1, 2, 3]}},
            "tensors": [{"name": "too_big", "shape": [1 << 62, 2], "dtype": "int8",
                         "src": {"mesh": "a", "dims": [["x"], []]},
                         "dst": {"mesh": "a", "dims": [[], []]}}]})


if __name__ == "__main__":
    main()
