#!/usr/bin/env python3
"""Writes the layout interchange JSON of a DeepSeek-V3-like MoE model refit.

The trainer is Megatron-style: a [dp, ep, tp] mesh (256 ranks by default);
dense weights are tensor-parallel and replicated over dp and ep, and each
routed expert lives on one expert-parallel group (a [dp, tp] sub-mesh) and is
tensor-parallel inside it. The inference engine is vLLM-style with wide
expert parallelism on disjoint ranks (64 by default): dense weights are
tensor-parallel in each of its dp replicas, and every routed expert sits whole
on one rank (a 0-D mesh). Fused weights carry blocks: q/k/v in qkv_proj and
gate/up in gate_up_proj, so each tensor-parallel shard holds a piece of each.

With the defaults (60 MoE layers x 256 experts x 2 fused weights, plus
attention, shared experts, routers and norms) it writes about 31,000 tensors.
Standard library only; one tensor per line, so diagnostics stay readable.
"""
import argparse
import json
import sys


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    m = p.add_argument_group("model")
    m.add_argument("--layers", type=int, default=60)
    m.add_argument("--dense-layers", type=int, default=0,
                   help="leading layers with a dense MLP instead of experts")
    m.add_argument("--experts", type=int, default=256)
    m.add_argument("--shared-experts", type=int, default=1)
    m.add_argument("--hidden", type=int, default=7168)
    m.add_argument("--moe-intermediate", type=int, default=2048)
    m.add_argument("--dense-intermediate", type=int, default=18432)
    m.add_argument("--heads", type=int, default=64)
    m.add_argument("--kv-heads", type=int, default=8)
    m.add_argument("--head-dim", type=int, default=128)
    m.add_argument("--vocab", type=int, default=129280)
    m.add_argument("--dtype", default="bf16")
    t = p.add_argument_group("trainer mesh [dp, ep, tp]")
    t.add_argument("--train-dp", type=int, default=4)
    t.add_argument("--train-ep", type=int, default=8)
    t.add_argument("--train-tp", type=int, default=8)
    i = p.add_argument_group("inference mesh [dp, tp], after the trainer's ranks")
    i.add_argument("--infer-dp", type=int, default=8)
    i.add_argument("--infer-tp", type=int, default=8)
    i.add_argument("--infer-first-rank", type=int, default=None,
                   help="first inference rank (default: just after the "
                        "trainer's, so the two are disjoint)")
    top = p.add_argument_group("topology")
    top.add_argument("--gpus-per-node", type=int, default=8)
    top.add_argument("--nvl-domain-size", type=int, default=8)
    p.add_argument("--out", default="-", help="output file ('-': stdout)")
    args = p.parse_args(argv)
    for name in ("layers", "experts", "hidden", "moe_intermediate", "heads",
                 "kv_heads", "head_dim", "vocab", "train_dp", "train_ep",
                 "train_tp", "infer_dp", "infer_tp"):
        if getattr(args, name) <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive")
    if not 0 <= args.dense_layers <= args.layers:
        p.error("--dense-layers must be in [0, --layers]")
    return args


def mesh(shape, axes, ranks):
    return {"shape": shape, "axes": axes, "ranks": ranks}


def build_meshes(a):
    dp, ep, tp = a.train_dp, a.train_ep, a.train_tp
    meshes = {"train": mesh([dp, ep, tp], ["dp", "ep", "tp"],
                            list(range(dp * ep * tp)))}
    # Expert-parallel group g: the trainer ranks whose ep coordinate is g.
    for g in range(ep):
        ranks = [(d * ep + g) * tp + t for d in range(dp) for t in range(tp)]
        meshes[f"train_ep{g}"] = mesh([dp, tp], ["dp", "tp"], ranks)
    first = dp * ep * tp if a.infer_first_rank is None else a.infer_first_rank
    n = a.infer_dp * a.infer_tp
    meshes["infer"] = mesh([a.infer_dp, a.infer_tp], ["dp", "tp"],
                           list(range(first, first + n)))
    for r in range(n):
        meshes[f"infer_rank{r}"] = mesh([], [], [first + r])
    return meshes


def tensor(name, shape, src_mesh, src_dims, dst_mesh, dst_dims, dtype,
           blocks=None):
    src = {"mesh": src_mesh, "dims": src_dims}
    dst = {"mesh": dst_mesh, "dims": dst_dims}
    if blocks:
        src["blocks"] = blocks
        dst["blocks"] = blocks
    return {"name": name, "shape": shape, "dtype": dtype, "src": src,
            "dst": dst}


def build_tensors(a):
    h, dt = a.hidden, a.dtype
    q, kv = a.heads * a.head_dim, a.kv_heads * a.head_dim
    row, col, rep1 = [["tp"], []], [[], ["tp"]], [[]]
    whole2 = [[], []]
    n_infer = a.infer_dp * a.infer_tp

    def dense(name, shape, dims, blocks=None, dtype=dt):
        # Same tensor-parallel split on both sides, replicated elsewhere.
        return tensor(name, shape, "train", dims, "infer", dims, dtype, blocks)

    out = [dense("model.embed_tokens.weight", [a.vocab, h], row)]
    for l in range(a.layers):
        p = f"model.layers.{l}"
        out += [
            dense(f"{p}.input_layernorm.weight", [h], rep1),
            dense(f"{p}.self_attn.qkv_proj.weight", [q + 2 * kv, h], row,
                  {"0": [q, kv, kv]}),
            dense(f"{p}.self_attn.o_proj.weight", [h, q], col),
            dense(f"{p}.post_attention_layernorm.weight", [h], rep1),
        ]
        if l < a.dense_layers:
            f = a.dense_intermediate
            out += [
                dense(f"{p}.mlp.gate_up_proj.weight", [2 * f, h], row,
                      {"0": [f, f]}),
                dense(f"{p}.mlp.down_proj.weight", [h, f], col),
            ]
            continue
        f = a.moe_intermediate
        out += [
            dense(f"{p}.mlp.gate.weight", [a.experts, h], whole2),
            dense(f"{p}.mlp.gate.e_score_correction_bias", [a.experts], rep1,
                  dtype="fp32"),
        ]
        if a.shared_experts:
            fs = f * a.shared_experts
            out += [
                dense(f"{p}.mlp.shared_experts.gate_up_proj.weight",
                      [2 * fs, h], row, {"0": [fs, fs]}),
                dense(f"{p}.mlp.shared_experts.down_proj.weight", [h, fs], col),
            ]
        for e in range(a.experts):
            g = e * a.train_ep // a.experts      # trainer EP group
            r = e * n_infer // a.experts         # inference rank
            src, dst = f"train_ep{g}", f"infer_rank{r}"
            pe = f"{p}.mlp.experts.{e}"
            out += [
                tensor(f"{pe}.gate_up_proj.weight", [2 * f, h], src, row, dst,
                       whole2, dt, {"0": [f, f]}),
                tensor(f"{pe}.down_proj.weight", [h, f], src, col, dst,
                       whole2, dt),
            ]
    out += [
        dense("model.norm.weight", [h], rep1),
        dense("lm_head.weight", [a.vocab, h], row),
    ]
    return out


def write(a, f):
    meshes = build_meshes(a)
    tensors = build_tensors(a)
    topology = {"gpus_per_node": a.gpus_per_node,
                "nvl_domain_size": a.nvl_domain_size,
                "nic_GBps_per_gpu": 50, "nvlink_GBps_per_gpu": 450,
                "nic_latency_us": 5, "nvlink_latency_us": 1}
    f.write('{"meshes": {\n')
    f.write(",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}"
                       for k, v in meshes.items()))
    f.write('},\n "topology": ' + json.dumps(topology) + ',\n "tensors": [\n')
    f.write(",\n".join("  " + json.dumps(t) for t in tensors))
    f.write("\n]}\n")
    return len(tensors)


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.out == "-":
        n = write(a, sys.stdout)
    else:
        with open(a.out, "w") as f:
            n = write(a, f)
    print(f"make_layout_json: {n} tensors", file=sys.stderr)


if __name__ == "__main__":
    main()
