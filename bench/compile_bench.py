#!/usr/bin/env python3
"""How large a whole-model plan is and what it costs to build: per scenario
(bench/make_refit_scenario.py), the one command that imports, plans, lowers
and emits (`reshard-compile layout.json --backend=nccl --report=...`, wall
time, CPU time and peak RSS, best of --repeat runs, which this shared
machine needs), the plan's size (tensors, classes, groups, pieces, the
lowered plan.mlir from one more, untimed run, the C++, the tables every
rank holds) and `g++ -O2 -c`
of the C++ (time, peak RSS, object size). Prints one Markdown table.

  python3 bench/compile_bench.py                 # every scenario below
  python3 bench/compile_bench.py --scenarios deepseek-v3-nemo-rl
  python3 bench/compile_bench.py --baseline-bin DIR
      also runs an older reshard-compile (DIR/reshard-compile) on the same
      layouts in this invocation and prints its figures and the ratios
  options: --repeat N (default 3)  --no-cxx  --json FILE  --keep DIR
           --build DIR  --smoke (one small case, for the test suite)
"""
import argparse
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from timing import die, make_scenario, run  # noqa: E402

# The layouts peers publish refit times for first (NeMo RL, NCCL M2N), then
# the bundled ones, then the largest.
SCENARIOS = ["deepseek-v3-nemo-rl", "deepseek-v3-m2n-gb200",
             "qwen235b-m2n-gb200", "llama70b-dgx", "qwen235b-dgx",
             "deepseek-v3-dgx", "llama70b-gb200", "qwen235b-gb200",
             "deepseek-v3-gb200", "kimi-k2-dgx"]
SMOKE = dict(scenario="deepseek-v3-nemo-rl", layers=4, scale_down=64)


def compile_once(compiler, layout, f, tag, repeat):
    """Best wall (with its CPU and peak) of `repeat` runs, and the outputs."""
    best = None
    cmd = [compiler, layout, "--backend=nccl", "-o", f(tag + ".cpp"),
           "--report=" + f(tag + ".report.json")]
    for _ in range(repeat):
        wall, rss, _, _, cpu = run(cmd, tag + " reshard-compile", lock=True)
        if best is None or wall < best[0]:
            best = (wall, cpu, rss)
    # The lowered program's size from one more, untimed run: printing it
    # is an extra output, not part of import -> C++.
    if "--mlir" in run([compiler, "--help"], "help")[2]:
        run([compiler, layout, "--emit=mlir", "-o", f(tag + ".mlir")],
            tag + " reshard-compile --emit=mlir")
    rep = json.load(open(f(tag + ".report.json")))
    cpp = f(tag + ".cpp")
    row = {"wall": best[0], "cpu": best[1], "peak_mib": best[2],
           "cpp_bytes": os.path.getsize(cpp),
           "mlir_bytes": (os.path.getsize(f(tag + ".mlir"))
                          if os.path.exists(f(tag + ".mlir")) else None),
           "tensors": rep["tensors"], "pieces": rep["pieces"],
           "classes": rep.get("classes"), "groups": rep.get("groups"),
           "network_bytes": rep["network_bytes"],
           "lower_bound_network_bytes": rep["lower_bound_network_bytes"],
           "estimated_seconds": rep["estimated_seconds"],
           "lower_bound_seconds": rep["lower_bound_seconds"],
           "steps": rep["plan"]["steps"]}
    with open(cpp) as fh:
        for line in fh:
            m = re.match(r"// Tables: (\d+) bytes", line)
            if m:
                row["table_bytes"] = int(m.group(1))
                break
            if not line.startswith("//"):
                break
    return row


def gxx(cpp, obj):
    inc = ["-I" + os.path.join(ROOT, "include")]
    if os.path.isdir("/usr/local/cuda/include"):
        inc.append("-I/usr/local/cuda/include")
    wall, rss, _, _, cpu = run(["g++", "-O2", "-std=c++17"] + inc +
                               ["-c", cpp, "-o", obj], "g++", lock=True)
    return {"gxx_wall": wall, "gxx_cpu": cpu, "gxx_peak_mib": rss,
            "object_bytes": os.path.getsize(obj)}


def bench(a, name, layers, scale_down, tmp):
    f = lambda x: os.path.join(tmp, x)  # noqa: E731
    make_scenario(name, layers, scale_down, f("layout.json"))
    comp = os.path.join(a.build, "bin", "reshard-compile")
    row = {"scenario": name, "layers": layers, "scale_down": scale_down}
    row["now"] = compile_once(comp, f("layout.json"), f, "now", a.repeat)
    if not a.no_cxx and os.path.isdir("/usr/local/cuda/include"):
        row["now"].update(gxx(f("now.cpp"), f("now.o")))
    if a.baseline_bin:
        base = os.path.join(a.baseline_bin, "reshard-compile")
        row["baseline"] = compile_once(base, f("layout.json"), f, "baseline",
                                       1)
    return row


def mb(n):
    return "%.1f MB" % (n / 1e6) if n is not None else "-"


def print_table(rows):
    print("| scenario | tensors | classes / groups | pieces | plan.mlir | C++ "
          "| tables per rank | import → C++ (report too) | its CPU | peak "
          "| g++ -O2 | g++ peak | object | network / LB | est. / LB time |")
    print("|---" * 15 + "|")
    for r in rows:
        n = r["now"]
        label = r["scenario"] + ("" if r["layers"] is None else
                                 " L%d /%d" % (r["layers"], r["scale_down"]))
        gx = ("%.2f s" % n["gxx_wall"], "%d MiB" % n["gxx_peak_mib"],
              mb(n["object_bytes"])) if "gxx_wall" in n else ("-",) * 3
        print("| %s | %d | %s / %s | %d | %s | %s | %s | **%.2f s** | %.2f s "
              "| %d MiB | %s | %s | %s | %.3f | %.3f |" % (
                  label, n["tensors"], n["classes"], n["groups"], n["pieces"],
                  mb(n["mlir_bytes"]), mb(n["cpp_bytes"]),
                  mb(n.get("table_bytes")), n["wall"], n["cpu"],
                  n["peak_mib"], gx[0], gx[1], gx[2],
                  n["network_bytes"] / max(n["lower_bound_network_bytes"], 1),
                  n["estimated_seconds"] / n["lower_bound_seconds"]))
    based = [r for r in rows if "baseline" in r]
    if not based:
        return
    print()
    print("| scenario | baseline: import → C++ | its peak | its C++ | now / "
          "baseline time | now / baseline peak | now / baseline C++ | "
          "est. time now / baseline |")
    print("|---" * 8 + "|")
    for r in based:
        n, b = r["now"], r["baseline"]
        print("| %s | %.2f s | %d MiB | %s | %.3f | %.3f | %.4f | %.3f |" % (
            r["scenario"], b["wall"], b["peak_mib"], mb(b["cpp_bytes"]),
            n["wall"] / b["wall"], n["peak_mib"] / b["peak_mib"],
            n["cpp_bytes"] / b["cpp_bytes"],
            n["estimated_seconds"] / b["estimated_seconds"]))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--scenarios", default=",".join(SCENARIOS))
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--baseline-bin")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-cxx", action="store_true")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--json")
    p.add_argument("--keep")
    a = p.parse_args()
    if not os.path.exists(os.path.join(a.build, "bin", "reshard-compile")):
        die("no reshard-compile in %s/bin: run scripts/build.sh" % a.build)
    cases = ([(SMOKE["scenario"], SMOKE["layers"], SMOKE["scale_down"])]
             if a.smoke else [(s, None, None) for s in a.scenarios.split(",")])
    rows = []
    for name, layers, scale in cases:
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(a.keep, name) if a.keep else tmp
            os.makedirs(d, exist_ok=True)
            rows.append(bench(a, name, layers, scale, d))
            print("compile_bench: %s done" % name, file=sys.stderr)
    print("### Compile: one command, plan size, g++ (best of %d)" % a.repeat)
    print()
    print_table(rows)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
