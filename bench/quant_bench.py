#!/usr/bin/env python3
"""FP8 refit against BF16 refit on the same model and layouts: per scenario
(bench/make_refit_scenario.py), the layout as it is (bf16 into bf16) and the
same layout with every linear weight delivered as FP8 with [128, 128] block
scales (DeepSeek-V3's FP8 checkpoint format; vLLM's `weight_scale_inv`),
both through `reshard-compile --backend=mpi --emit=none --report=...` in
this invocation: network bytes, the lower bound, modelled time, compile
time, and the ratios. A weight is quantized when every destination shard
holds whole blocks (as vLLM requires); reshard-quantize then quantizes it
on the senders where every trainer shard holds whole blocks too, else on
the receivers after a bf16 transfer (the table counts both). The others
stay bf16 and are counted. Embeddings, norms, the router and the output
layer stay bf16, as in the checkpoints.

  python3 bench/quant_bench.py                     # the scenarios below
  python3 bench/quant_bench.py --scenarios deepseek-v3-nemo-rl --repeat 1
  options: --block 128  --smoke (a small case, for the suite)  --json FILE
           --simulate [LIST]  also replay both plans of these scenarios
           (default all) in SimGrid (bench/Simulation.md; minutes each)
           --simulator fluid  replay in bench/replay/refit_fluid.cpp instead
           --workspace  also every rank's workspace (the lowered plans'):
           the largest and the mean, bf16 against FP8 (a holder keeps its
           scales, not an FP8 copy: the pack quantizes)
"""
import argparse
import json
import os
import re
import sys
import tempfile
from functools import lru_cache

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "Tools", "reshard-run",
                                "Inputs"))
from sim_bench import replay_plan  # noqa: E402
from timing import die, make_scenario, run  # noqa: E402
import shards  # noqa: E402  the layout oracle, per dim

SCENARIOS = ["deepseek-v3-nemo-rl", "deepseek-v3-dgx", "deepseek-v3-gb200",
             "qwen235b-dgx"]
SMOKE = dict(scenario="deepseek-v3-dgx", layers=4, scale_down=16)
KEEP_BF16 = ("embed", "norm", "lm_head", "output_layer", "mlp.gate.weight",
             "router")


def whole_blocks(layout, spec, size, dim, block):
    """Whether every device of a side holds whole blocks along `dim`."""
    mesh = layout["meshes"][spec["mesh"]]
    key = (json.dumps(mesh, sort_keys=True), size, tuple(spec["dims"][dim]),
           json.dumps(spec.get("blocks", {}).get(str(dim))),
           json.dumps(spec.get("order", {}).get(str(dim))), block)
    return _whole_blocks(key)


@lru_cache(maxsize=None)
def _whole_blocks(key):
    mesh_json, size, axes, blocks, order, block = key
    mesh = json.loads(mesh_json)
    blocks, order = json.loads(blocks), json.loads(order)
    at = 0
    for b in blocks or []:  # fused blocks start on a quantization block
        if at % block and at != size:
            return False
        at += b
    n = 1
    for s in mesh["shape"]:
        n *= s
    for i in range(n):
        coords = shards.unravel(i, mesh["shape"])
        idx = shards.dim_indices(size, list(axes), blocks, mesh, coords, order)
        # Maximal runs of consecutive indices must start on a block and end
        # on one or at the dim's end.
        start = 0
        for j in range(1, len(idx) + 1):
            if j == len(idx) or idx[j] != idx[j - 1] + 1:
                first, end = idx[start], idx[j - 1] + 1
                if first % block or (end % block and end != size):
                    return False
                start = j
    return True


def quantize_layout(layout, block):
    """The layout with every eligible linear weight quantized; returns it
    and (quantized, left bf16) counts."""
    out = json.loads(json.dumps(layout))
    done = left = 0
    for t in out["tensors"]:
        name, shape = t["name"], t["shape"]
        if (len(shape) != 2 or not name.endswith("weight") or
                t["dtype"] not in ("bf16", "fp16", "fp32") or
                any(k in name for k in KEEP_BF16)):
            continue
        if all(whole_blocks(out, t["dst"], shape[d], d, block)
               for d in range(2)):
            t["dst"]["quant"] = {"block": [block, block]}
            done += 1
        else:
            left += 1
    return out, done, left


def compile_report(compiler, path, report, repeat):
    best = None
    for _ in range(repeat):
        wall, rss, _, _, cpu = run([compiler, path, "--backend=mpi",
                                    "--emit=none", "--report=" + report],
                                   "reshard-compile", lock=True)
        best = wall if best is None else min(best, wall)
    with open(report) as f:
        return json.load(f), best


def lowered(compiler, path):
    """The lowered plan of layout PATH (compiled once more, untimed)."""
    mlir = path + ".plan.mlir"
    if not os.path.exists(mlir):
        run([compiler, path, "--emit=mlir", "-o", mlir], "reshard-compile")
    return mlir


def simulated(compiler, build, path, report, simulator):
    """The simulated time (SimGrid's or the fluid replay's) of the plan of
    layout PATH, whose report is REPORT."""
    return replay_plan(build, lowered(compiler, path), report,
                       os.path.basename(path), simulators=(simulator,))


def workspaces(compiler, path):
    """Every rank's workspace bytes in the lowered plan of layout PATH."""
    with open(lowered(compiler, path)) as f:
        return [int(w) for w in re.findall(
            r"reshard_rt\.rank \d+ workspace = (\d+)", f.read())]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenarios", default=",".join(SCENARIOS))
    p.add_argument("--block", type=int, default=128)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--json")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--simulate", nargs="?", const="all", metavar="LIST")
    p.add_argument("--simulator", choices=["simgrid", "fluid"],
                   default="simgrid", help="the replay (bench/Simulation.md)")
    p.add_argument("--workspace", action="store_true",
                   help="also the ranks' workspace bytes, bf16 and FP8")
    a = p.parse_args()
    simulate = a.simulate.split(",") if a.simulate else []
    compiler = os.path.join(a.build, "bin", "reshard-compile")
    if not os.access(compiler, os.X_OK):
        die(f"{compiler} is not built (scripts/build.sh reshard-compile)")
    cases = ([SMOKE] if a.smoke else
             [dict(scenario=s, layers=None, scale_down=None)
              for s in a.scenarios.split(",")])
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for c in cases:
            base = os.path.join(work, c["scenario"] + ".json")
            make_scenario(c["scenario"], c["layers"], c["scale_down"], base)
            with open(base) as f:
                layout = json.load(f)
            q, done, left = quantize_layout(layout, a.block)
            fp8 = os.path.join(work, c["scenario"] + ".fp8.json")
            with open(fp8, "w") as f:
                json.dump(q, f)
            rb, tb = compile_report(compiler, base, base + ".report.json",
                                    a.repeat)
            rq, tq = compile_report(compiler, fp8, fp8 + ".report.json",
                                    a.repeat)
            qt = rq.get("quantized", {})
            sims = {}
            if c["scenario"] in simulate or "all" in simulate:
                sims = dict(
                    bf16_sim=simulated(compiler, a.build, base, rb, a.simulator),
                    fp8_sim=simulated(compiler, a.build, fp8, rq, a.simulator))
            if a.workspace:
                sims.update(bf16_workspace=workspaces(compiler, base),
                            fp8_workspace=workspaces(compiler, fp8))
            rows.append(dict(sims,
                scenario=c["scenario"], quantized=done, left_bf16=left,
                on_receiver=qt.get("on_receiver", 0),
                bf16_network=rb["network_bytes"],
                fp8_network=rq["network_bytes"],
                fp8_lower_bound=rq["lower_bound_network_bytes"],
                bf16_seconds=rb["estimated_seconds"],
                fp8_seconds=rq["estimated_seconds"],
                fp8_bound_seconds=rq["lower_bound_seconds"],
                payload=qt.get("payload_bytes", 0),
                scales=qt.get("scale_bytes", 0),
                full=qt.get("full_precision_bytes", 0),
                moved=qt.get("moved_bytes", 0),
                bf16_compile=tb, fp8_compile=tq))
    print("| scenario | weights FP8 / left bf16 | of them on receivers | "
          "network B bf16 | network B "
          "FP8 | FP8 / bf16 | FP8 / its bound | modelled s bf16 | modelled "
          "s FP8 | FP8 / bf16 | moved / bf16 of those weights | "
          "compile s bf16 | compile s FP8 |")
    print("|" + "---|" * 13)
    for r in rows:
        print(f"| {r['scenario']} | {r['quantized']} / {r['left_bf16']} | "
              f"{r['on_receiver']} | "
              f"{r['bf16_network']:,} | {r['fp8_network']:,} | "
              f"{r['fp8_network'] / max(1, r['bf16_network']):.3f} | "
              f"{r['fp8_network'] / max(1, r['fp8_lower_bound']):.3f} | "
              f"{r['bf16_seconds']:.4g} | {r['fp8_seconds']:.4g} | "
              f"{r['fp8_seconds'] / max(1e-12, r['bf16_seconds']):.3f} | "
              f"{r['moved'] / max(1, r['full']):.4f} | "
              f"{r['bf16_compile']:.2f} | {r['fp8_compile']:.2f} |")
    simulated_rows = [r for r in rows if "fp8_sim" in r]
    if simulated_rows:
        print("\n| scenario | simulated s bf16 | simulated s FP8 | FP8 / bf16 "
              "| FP8 simulated / modelled | FP8 simulated / its bound | "
              "replay wall s bf16 / FP8 |")
        print("|" + "---|" * 7)
    for r in simulated_rows:
        b, q = r["bf16_sim"], r["fp8_sim"]
        print(f"| {r['scenario']} | {b['simulated_seconds']:.4g} | "
              f"{q['simulated_seconds']:.4g} | "
              f"{q['simulated_seconds'] / b['simulated_seconds']:.3f} | "
              f"{q['simulated_seconds'] / r['fp8_seconds']:.3f} | "
              f"{q['simulated_seconds'] / r['fp8_bound_seconds']:.3f} | "
              f"{b['sim_wall_seconds']:.0f} / {q['sim_wall_seconds']:.0f} |")
    ws_rows = [r for r in rows if "fp8_workspace" in r]
    if ws_rows:
        print("\n| scenario | ranks | largest workspace B bf16 | largest FP8 "
              "| FP8 / bf16 | mean B bf16 | mean FP8 | FP8 / bf16 |")
        print("|" + "---|" * 8)
    for r in ws_rows:
        b, q = r["bf16_workspace"], r["fp8_workspace"]
        mb, mq = sum(b) / max(1, len(b)), sum(q) / max(1, len(q))
        print(f"| {r['scenario']} | {len(q)} | {max(b):,} | {max(q):,} | "
              f"{max(q) / max(1, max(b)):.3f} | {mb:,.0f} | {mq:,.0f} | "
              f"{mq / max(1, mb):.3f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
