"""python -m reshard {params,plan,plot,scenarios}: the command line.

Bad input is reported as `reshard: error: ...` on stderr with exit status 2
(no traceback); a failing tool gives its message and status 1.
"""
import argparse
import dataclasses
import math
import os
import re
import sys
import tempfile

from .errors import ReshardError, parse_bytes, read_json
from .megatron import parse_train
from .models import bundled_models, count_params, get_model, model_params
from .refit import SCENARIOS, build_layout
from .topology import TOPOLOGIES, get_topology
from .vllm import parse_infer

# vLLM's fused parameters -> the checkpoint tensors they concatenate, each
# one block, or (name, k) for k blocks.
FUSED = {"qkv_proj": ("q_proj", "k_proj", "v_proj"),
         "gate_up_proj": ("gate_proj", "up_proj"),
         "fused_qkv_a_proj": ("q_a_proj", "kv_a_proj_with_mqa"),
         "w13": ("w1", "w3"),     # Mixtral experts: gate (w1), up (w3)
         # Qwen3.5's Gated DeltaNet (Qwen3-Next's are checkpoint tensors).
         "in_proj_qkvz": (("in_proj_qkv", 3), "in_proj_z"),
         "in_proj_ba": ("in_proj_b", "in_proj_a")}


class UsageError(ReshardError):
    pass


def hf_params(params):
    """(name, shape, dtype) in checkpoint names: fused tensors split;
    gpt-oss's renamed by vLLM back and its experts packed per layer."""
    params = list(params)
    if any(p.role == "glu" for p in params):
        params = list(_gpt_oss_checkpoint(params))
    for p in params:
        parts = p.name.split(".")
        hit = [i for i, s in enumerate(parts) if s in FUSED]
        if not hit or not p.blocks:
            yield p.name, p.shape, p.dtype
            continue
        i = hit[-1]
        blocks = list(p.blocks)
        for sub in FUSED[parts[i]]:
            sub, k = (sub, 1) if isinstance(sub, str) else sub
            rows, blocks = sum(blocks[:k]), blocks[k:]
            yield (".".join(parts[:i] + [sub] + parts[i + 1:]),
                   [rows] + p.shape[1:], p.dtype)


def _gpt_oss_checkpoint(params):
    """gpt-oss's tensors under the checkpoint's names: embed_tokens and
    self_attn (vLLM's gpt_oss.py renames them), and each layer's experts
    as its four packed tensors, gate_up_proj [E, h, 2f] (gate and up
    columns interleaved), gate_up_proj_bias [E, 2f], down_proj [E, f, h]
    and down_proj_bias [E, h]."""
    experts = {}
    for p in params:
        if p.expert is not None:
            experts.setdefault(p.layer, []).append(p)
    for p in params:
        if p.expert is None:
            name = p.name.replace("model.embedding.", "model.embed_tokens.")
            yield dataclasses.replace(
                p, name=name.replace(".attn.", ".self_attn."))
            continue
        if not p.name.endswith(".experts.0.gate_up_proj.weight"):
            continue                # the layer's first expert packs them
        ps = {q.name.split(".experts.")[1].split(".", 1)[1]: q
              for q in experts[p.layer] if q.expert == 0}
        n, (_, f, h) = len(experts[p.layer]) // 4, p.shape
        base = p.name.split(".experts.")[0] + ".experts."
        for name, shape, q in (
                ("gate_up_proj", [n, h, 2 * f], "gate_up_proj.weight"),
                ("gate_up_proj_bias", [n, 2 * f], "gate_up_proj.bias"),
                ("down_proj", [n, f, h], "down_proj.weight"),
                ("down_proj_bias", [n, h], "down_proj.bias")):
            yield dataclasses.replace(ps[q], name=base + name, shape=shape,
                                      role="rep", expert=None)


def _fmt(n):
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.2f}M"


def cmd_params(a):
    m = get_model(a.model)
    params = model_params(m, a.layers)
    rows = ((p.name, p.shape, p.dtype) for p in params) if a.fused \
        else hf_params(params)
    out = sys.stdout
    for name, shape, dtype in rows:
        out.write(f"{name}\t{list(shape)}\t{dtype}\t{math.prod(shape)}\n")
    total = count_params(params)
    line = f"total: {total:,} parameters ({_fmt(total)})"
    if m.public_params and a.layers is None:
        dev = (total - m.public_params) / m.public_params * 100
        line += f"; public {m.public_label}: {dev:+.3f}%"
    out.write(line + "\n")
    return 0


def split_spec(text, framework, flag):
    """'megatron:tp=8,pp=2' -> 'tp=8,pp=2' (the framework must match)."""
    fw, sep, rest = text.partition(":")
    # 'stages=7:8' has colons too; 'megatron:megatron:...' is a slip.
    again, sep2, _ = rest.partition(":")
    if not sep or "=" in fw or "," in fw or (
            sep2 and "=" not in again and "," not in again):
        raise UsageError(f"{flag} {text!r}: give FRAMEWORK:SPEC, e.g. "
                         f"{framework}:tp=8,...")
    if fw.strip().lower() != framework:
        raise UsageError(f"{flag}: framework {fw!r} is not supported here "
                         f"(use {framework}:...)")
    return rest


def parse_size(text):
    """'268435456', '256M', '1GiB' -> bytes."""
    try:
        return parse_bytes(text, "--staging-budget")
    except ReshardError as e:
        raise UsageError(str(e))


def _topology(text):
    if text in TOPOLOGIES or not os.path.isfile(text):
        return get_topology(text)
    return get_topology(read_json(text, f"--topology {text}"))


def _layout(a):
    t = parse_train(split_spec(a.source, "megatron", "--source"), "--source")
    i = parse_infer(split_spec(a.dest, "vllm", "--dest"), "--dest")
    if a.expert_map is not None:
        # EPLB's physical_to_logical_map as JSON: one row, a row per MoE
        # layer, or one map per vLLM stage.
        rows = read_json(a.expert_map, f"--expert-map {a.expert_map}")
        try:
            i = dataclasses.replace(i, expert_map=rows)
        except ReshardError as e:
            raise UsageError(f"--expert-map {a.expert_map}: "
                             f"{str(e).replace('vLLM: ', '', 1)}") from None
    return build_layout(a.model, t, i, _topology(a.topology),
                        layers=a.layers, scale_down=a.scale_down,
                        colocated=a.colocated, infer_first_rank=a.dest_first)


def cmd_plan(a):
    from . import report
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", a.plan_name):
        raise UsageError(f"--plan-name {a.plan_name!r} must be a C "
                         f"identifier")
    budget = parse_size(a.staging_budget)
    layout = _layout(a)
    os.makedirs(a.out, exist_ok=True)
    js = os.path.join(a.out, "layout.json")
    ml = os.path.join(a.out, "layout.mlir")
    layout.write_json(js)
    layout.write_mlir(ml)
    s = layout.info
    say = print if not a.quiet else (lambda *x, **k: None)
    for note in s["notes"]:
        print(f"reshard: note: {note}", file=sys.stderr)
    t, i = s["train"], s["infer"]
    vpp = f" ({t['vpp']} chunks each)" if "vpp" in t else ""
    if "pipeline_layout" in t:
        vpp = f" (layout {t['pipeline_layout']}" + (
            f", {t['vpp']} chunks each)" if "vpp" in t else ")")
    pp = f", stages {i['layers_per_stage']}" if "pp" in i else ""
    pad = "".join(f"; {who} vocab padded to {side['padded_vocab']}"
                  for who, side in (("train", t), ("infer", i))
                  if "padded_vocab" in side)
    if "eplb" in i:
        pad += (f"; EPLB {i['eplb']['redundant']} redundant experts "
                f"({i['eplb']['map']} map)")
    say(f"{s['model']}: {len(layout.tensors)} tensors, {s['params']:,} "
        f"parameters, {s['bytes'] / 2**30:.2f} GiB; train ranks "
        f"{t['ranks'][0]}..{t['ranks'][1]}, stages "
        f"{t['layers_per_stage']}{vpp}; infer ranks "
        f"{i['ranks'][0]}..{i['ranks'][1]}{pp}{pad}")
    if a.layout_only:
        say(f"wrote {js}, {ml}")
        return 0
    r = report.compile_plan(ml, a.out, a.plan_name, a.backend, budget)
    p, gb = r.plan, r.baselines.get("gather-broadcast")
    say(f"network {p.network_bytes:,} B (lower bound "
        f"{r.lower_bound_network_bytes:,}), busiest NIC "
        f"{p.busiest_nic_bytes:,} B (bound {r.lower_bound_busiest_nic_bytes:,})"
        f", {p.steps} steps")
    say(f"estimated {p.estimated_seconds:.6g} s (lower bound "
        f"{r.lower_bound_seconds:.6g} s)" +
        (f"; gather-broadcast {gb.estimated_seconds:.6g} s" if gb else ""))
    say(f"wrote {a.out}/: layout.json layout.mlir report.json plan.mlir "
        f"{a.plan_name}.cpp {a.plan_name}.h ({a.backend})")
    return 0


def cmd_plot(a):
    from . import plot, report
    src = a.input
    if os.path.isdir(src):
        plan = os.path.join(src, "plan.mlir")
        rep = os.path.join(src, "report.json")
        for f in (plan, rep):
            if not os.path.isfile(f):
                raise UsageError(f"{src}: no {os.path.basename(f)} (write "
                                 f"the folder with `python -m reshard plan`)")
        outs = a.output or [os.path.join(src, "traffic.png"),
                            os.path.join(src, "traffic.svg")]
        return _draw(plot, plan, report.Report.load(rep), outs, a.title)
    if not os.path.isfile(src):
        raise UsageError(f"{src}: no such file or folder")
    stem = os.path.splitext(src)[0]
    outs = a.output or [stem + ".traffic.png", stem + ".traffic.svg"]
    with tempfile.TemporaryDirectory() as tmp:
        r = report.compile_plan(src, tmp, "plot", "mpi",
                                parse_size(a.staging_budget))
        return _draw(plot, os.path.join(tmp, "plan.mlir"), r, outs, a.title)


def _draw(plot, plan, rep, outs, title):
    for o in outs:
        if os.path.splitext(o)[1].lower() not in (".png", ".svg", ".pdf"):
            raise UsageError(f"{o}: give a .png, .svg or .pdf file")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ReshardError("plot needs matplotlib: python3 -m pip install "
                           "matplotlib")
    pairs = plot.draw(plan, rep, outs, title)
    print(f"{len(pairs)} rank pairs; wrote {', '.join(outs)}")
    return 0


def cmd_scenarios(a):
    for name, s in SCENARIOS.items():
        print(f"{name:18} {s['model']:16} {s['topology']:12} "
              f"--source megatron:{s['train']} --dest vllm:{s['infer']}")
    return 0


def parser():
    p = argparse.ArgumentParser(
        prog="python -m reshard",
        description="reshard's Python front end: model presets, Megatron "
                    "and vLLM layouts, plans (docs/Python.md).")
    sub = p.add_subparsers(dest="cmd", required=True)
    models = ", ".join(bundled_models())

    q = sub.add_parser("params", help="print a model's parameter list")
    q.add_argument("--model", required=True,
                   help=f"config.json path or bundled name ({models})")
    q.add_argument("--layers", type=int, help="first N layers only")
    q.add_argument("--fused", action="store_true",
                   help="vLLM's fused tensors (qkv_proj, gate_up_proj) "
                        "instead of the checkpoint's")
    q.set_defaults(fn=cmd_params)

    q = sub.add_parser("plan", help="layout, report and C++ of a refit")
    q.add_argument("--model", required=True,
                   help=f"config.json path or bundled name ({models})")
    q.add_argument("--source", required=True,
                   help='"megatron:tp=8,pp=2,dp=4[,cp=,ep=,etp=,vpp=,first=,'
                        'last=|stages=a:b:..|layout=Et*3|(tt|)*29,m|L]'
                        '[,vocab_pad=128|,padded_vocab=N]" (layout: '
                        "Megatron's --pipeline-model-parallel-layout, last)")
    q.add_argument("--dest", required=True,
                   help='"vllm:tp=8[,dp=2][,pp=2[,stages=a:b]][,pcp=2][,engines=4][,ep=1]'
                        '[,spmoe=auto|0|1][,w13=gate_up|up_gate]'
                        '[,fp8=block|ue8m0|mx]'
                        '[,placement=linear|round_robin]'
                        '[,redundant=N]" '
                        '(engines= independent engines, '
                        'each of vLLM\'s --data-parallel-size dp; '
                        'w13=up_gate: routed experts\' '
                        'w13 as FlashInfer\'s [up; gate]; fp8: linear '
                        'weights as FP8 with [128, 128] fp32 scales '
                        '(ue8m0: rounded up to powers of two) or '
                        'MXFP8; placement: vLLM\'s '
                        '--expert-placement-strategy)')
    q.add_argument("--expert-map", metavar="FILE.json",
                   help="vLLM EPLB's physical_to_logical_map now (a JSON "
                        "row, rows per MoE layer, or maps per stage); "
                        "with redundant= in --dest")
    q.add_argument("--topology", default="dgx-h100",
                   help=f"{' or '.join(TOPOLOGIES)}, or a JSON file")
    q.add_argument("-o", "--out", required=True, help="output folder")
    q.add_argument("--backend", choices=("nccl", "mpi"), default="nccl")
    q.add_argument("--plan-name", default="refit",
                   help="C symbol prefix of the plan (default refit)")
    q.add_argument("--staging-budget", default="1G",
                   help="staging memory per rank (bytes, or 256M, 1G)")
    q.add_argument("--layers", type=int, help="first N layers only")
    q.add_argument("--scale-down", type=int, default=1, metavar="F",
                   help="divide hidden-like dims by F (for test runs)")
    g = q.add_mutually_exclusive_group()
    g.add_argument("--colocated", action="store_true",
                   help="inference on ranks 0..M-1, shared with training")
    g.add_argument("--dest-first-rank", dest="dest_first", type=int,
                   metavar="R", help="first inference rank (default: after "
                                     "the trainer's)")
    q.add_argument("--layout-only", action="store_true",
                   help="write layout.json and layout.mlir only")
    q.add_argument("-q", "--quiet", action="store_true")
    q.set_defaults(fn=cmd_plan)

    q = sub.add_parser("plot", help="traffic matrix and per-NIC load")
    q.add_argument("input", help="a folder written by plan, or a layout "
                                 "(.json or .mlir) to plan first")
    q.add_argument("-o", "--output", action="append",
                   help="PNG/SVG file (repeatable; default traffic.png and "
                        "traffic.svg in the folder)")
    q.add_argument("--title")
    q.add_argument("--staging-budget", default="1G")
    q.set_defaults(fn=cmd_plot)

    q = sub.add_parser("scenarios", help="the benchmark's bundled refits")
    q.set_defaults(fn=cmd_scenarios)
    return p


def main(argv=None):
    a = parser().parse_args(argv)
    try:
        return a.fn(a)
    except ReshardError as e:
        # A tool that failed on our output is not the user's usage error.
        tool_failure = " failed (exit " in str(e).splitlines()[0]
        print(f"reshard: error: {e}", file=sys.stderr)
        return 1 if tool_failure else 2
    except BrokenPipeError:
        return 0
    except OSError as e:
        # An output folder or file that cannot be written, an unreadable
        # input: the user's to fix, not a bug to trace back.
        where = f"{e.filename}: " if e.filename else ""
        print(f"reshard: error: {where}{e.strerror or e}", file=sys.stderr)
        return 2
