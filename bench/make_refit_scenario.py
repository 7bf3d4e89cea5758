#!/usr/bin/env python3
"""Writes the layout JSON of a whole-model refit, with real model shapes.

A refit scenario is one model (a config.json under examples/models/:
llama-3.1-70b, qwen3-235b-a22b, deepseek-v3), a Megatron-Core training
layout (--train "tp=8,pp=2,dp=4"), a vLLM inference layout (--infer
"tp=8,dp=4") and a cluster topology (--topology dgx-h100). Every parameter
becomes one `tensors[]` entry of the format in README.md ("The layout
interchange format"), written one per line.

  python3 bench/make_refit_scenario.py --list
  python3 bench/make_refit_scenario.py --scenario deepseek-v3-dgx --out f.json
  python3 bench/make_refit_scenario.py --model deepseek-v3 \\
      --train "tp=8,ep=8,pp=4,dp=1" --infer "tp=8,dp=8,ep=1" \\
      --topology dgx-h100 --out FILE.json
  # small enough to execute with `reshard-run FILE --check`:
  python3 bench/make_refit_scenario.py --scenario qwen235b-dgx --layers 2 \\
      --scale-down 64 --out small.json

The total parameter count goes to stderr, with the public count of the model.
A thin wrapper over the Python package (python/reshard: models, megatron,
vllm, refit); the tensor names, the Megatron and vLLM rank orders and the
frameworks' code they mirror are documented in docs/Python.md.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))

from reshard.errors import ReshardError as LayoutError  # noqa: E402
from reshard.layout import write_layout_dict  # noqa: E402
from reshard.megatron import parse_train  # noqa: E402
from reshard.models import bundled_models, get_model  # noqa: E402
from reshard.refit import SCENARIOS, build_layout  # noqa: E402
from reshard.topology import TOPOLOGIES  # noqa: E402
from reshard.vllm import parse_infer  # noqa: E402

MODELS = {name: get_model(name) for name in bundled_models()}


def write_layout(layout, f):
    """Writes the JSON (a Layout or its dict): one mesh, one tensor a line."""
    write_layout_dict(layout if isinstance(layout, dict) else
                      layout.to_dict(), f)


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Scenarios: " + ", ".join(SCENARIOS) + " (see --list).")
    p.add_argument("--list", action="store_true",
                   help="print the bundled scenarios and exit")
    p.add_argument("--scenario", choices=sorted(SCENARIOS),
                   help="a bundled scenario; --model/--train/--infer/"
                        "--topology override its parts")
    p.add_argument("--model", choices=sorted(MODELS))
    p.add_argument("--train", help='Megatron layout, e.g. "tp=8,pp=2,dp=4" '
                   '(keys tp pp dp cp ep etp vpp first last stages)')
    p.add_argument("--infer", help='vLLM layout, e.g. "tp=8,dp=4" or '
                   '"tp=8,dp=8,ep=1" (keys tp dp pp stages pcp engines ep spmoe w13 '
                   'fp8 placement)')
    p.add_argument("--topology", choices=sorted(TOPOLOGIES))
    p.add_argument("--layers", type=int,
                   help="keep only the first N transformer layers (with "
                        "--scenario, its first=/last=/stages= are dropped)")
    p.add_argument("--scale-down", type=int, default=1, metavar="F",
                   help="divide hidden-like dimensions by F (for execution "
                        "tests)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--colocated", action="store_true",
                   help="inference on ranks 0..M-1 (shared with the trainer)")
    g.add_argument("--infer-first-rank", type=int, metavar="R",
                   help="first inference rank (default: after the trainer's)")
    p.add_argument("--out", default="-", help="output file ('-': stdout)")
    a = p.parse_args(argv)
    if a.list:
        return a
    base = SCENARIOS.get(a.scenario, {})
    for key in ("model", "train", "infer", "topology"):
        if getattr(a, key) is None:
            setattr(a, key, base.get(key))
    if a.topology is None:
        a.topology = "dgx-h100"
    missing = [k for k in ("model", "train", "infer") if getattr(a, k) is None]
    if missing:
        p.error("give --scenario or --" + ", --".join(missing))
    if a.scale_down < 1:
        p.error("--scale-down must be >= 1")
    if a.infer_first_rank is not None and a.infer_first_rank < 0:
        p.error("--infer-first-rank must be >= 0")
    if a.layers is not None and a.scenario and a.train == base.get("train"):
        a.train = ",".join(item for item in a.train.split(",")
                           if item.split("=")[0] not in ("first", "last",
                                                         "stages"))
    return a


def describe(name, s):
    t, i = parse_train(s["train"]), parse_infer(s["infer"])
    return (f"{name:18} {s['model']:16} {s['topology']:12} "
            f"train \"{s['train']}\" ({t.world} GPUs) -> "
            f"infer \"{s['infer']}\" ({i.world} GPUs)")


def _fmt_b(n):
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.2f}M"


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.list:
        for name, s in SCENARIOS.items():
            print(describe(name, s))
        return 0
    start = time.perf_counter()
    try:
        layout = build_layout(MODELS[a.model], a.train, a.infer, a.topology,
                              layers=a.layers, scale_down=a.scale_down,
                              colocated=a.colocated,
                              infer_first_rank=a.infer_first_rank,
                              scenario=a.scenario).to_dict()
    except LayoutError as e:
        print(f"make_refit_scenario: error: {e}", file=sys.stderr)
        return 2
    if a.out == "-":
        write_layout(layout, sys.stdout)
    else:
        with open(a.out, "w") as f:
            write_layout(layout, f)
    s = layout["scenario"]
    for note in s["notes"]:
        print(f"make_refit_scenario: note: {note}", file=sys.stderr)
    full, pub = s["full_model_params"], s["public_params"]
    dev = (full - pub) / pub * 100
    print(f"make_refit_scenario: {s['model']}: {len(layout['tensors'])} "
          f"tensors, {len(layout['meshes'])} meshes, {s['params']:,} "
          f"parameters ({_fmt_b(s['params'])}, {s['bytes'] / 2**30:.1f} GiB); "
          f"train {s['train']['ranks'][1] + 1} GPUs, stages "
          f"{s['train']['layers_per_stage']}; infer ranks "
          f"{s['infer']['ranks'][0]}..{s['infer']['ranks'][1]}; "
          f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    print(f"make_refit_scenario: full {s['model']}: {full:,} parameters "
          f"({_fmt_b(full)}), public {MODELS[s['model']].public_label}: "
          f"{dev:+.3f}%", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
