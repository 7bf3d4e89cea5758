"""One rank of an FP8 refit through the frameworks' parameters, for
runtime_worker.py's `refit-fp8` mode: test_names.py's fake Megatron
parameters (bf16) into fake vLLM ones whose quantized weights are FP8
with their `weight_scale_inv` beside them, mapped by megatron_tensors /
vllm_tensors, the plan run with verify=True. Two checks:

- every view against quant_ref.quantize of its layout tensor's logical
  values, placed by the layout oracle (the plain ones byte for byte);
- every routed expert's whole w13_weight[j] and w13_weight_scale_inv[j]
  as vLLM's FlashInfer experts hold them: [up_t; gate_t], each half the
  checkpoint's FP8 blocks of gate_proj or up_proj, rows t of the FusedMoE
  TP shard; where each expert sits is the fake's own model of vLLM.
"""
import json
import zlib

import torch

import quant_ref
import test_names
from orders_ref import shards
import reshard
from reshard.refit import build_layout

SENTINEL = 0x5A


def logical_values(layout):
    """({layout tensor: its logical values}, {fused tensor: its values}):
    a piece's are rows of its fused tensor's (both halves of an expert's
    w13 come from one tensor), an EPLB copy's its expert's."""
    bases, out = {}, {}
    for t in layout["tensors"]:
        into = t.get("fused_into")
        if into:
            end = max(a + n for a, n in t["fused_rows"])
            shape = bases.setdefault(into, [0] + t["shape"][1:])
            shape[0] = max(shape[0], end)

    def values(name, shape, quant):
        seed = zlib.crc32(name.encode())
        if quant:
            return quant_ref.test_values(shape, torch.bfloat16, seed, quant)
        return torch.randn(shape, generator=torch.Generator().manual_seed(
            seed)).to(torch.bfloat16)
    quant = {"block": [128, 128]}
    whole = {n: values(n, s, quant) for n, s in bases.items()}
    for t in layout["tensors"]:
        into = t.get("fused_into")
        if into:
            rows = [r for a, n in t["fused_rows"] for r in range(a, a + n)]
            out[t["name"]] = whole[into][rows]
        else:                   # an EPLB copy: the expert's values
            out[t["name"]] = values(t.get("copy_of", t["name"]), t["shape"],
                                    t["dst"].get("quant"))
    return out, whole


def fp8_params(lay, fake, rank):
    """The fake vLLM parameters with every parameter a quantized tensor
    lands in made FP8, and its weight_scale_inv beside it."""
    params = dict(fake.params)
    scales = {n + "_scale_inv": torch.full(
        list(p.shape[:-2]) + [-(-p.shape[-2] // 128), -(-p.shape[-1] // 128)],
        float("nan")) for n, p in params.items() if p.dim() >= 2}
    views = reshard.vllm_tensors(lay, dict(params, **scales), rank)
    quantized = {t.name for t in lay.tensors if t.dst.quant}
    fp8 = {n for n, p in params.items() for v, view in views.items()
           if v in quantized and view.untyped_storage().data_ptr()
           == p.untyped_storage().data_ptr()}
    out = {}
    for n, p in params.items():
        if n in fp8:
            out[n] = torch.full(p.shape, SENTINEL, dtype=torch.uint8
                                ).view(torch.float8_e4m3fn)
            out[n + "_scale_inv"] = scales[n + "_scale_inv"]
        else:
            out[n] = torch.empty_like(p)
            out[n].view(torch.uint8).fill_(SENTINEL)
    return out


def same(got, want):
    """Bytes equal, or both NaN (a NaN's sign is not in the contract)."""
    if want.dtype == torch.float8_e4m3fn:
        nan = torch.isnan(got.float()) & torch.isnan(want.float())
        return int((~((got.view(torch.uint8) == want.view(torch.uint8))
                      | nan)).sum())
    return int((got.view(torch.uint8) != want.view(torch.uint8)).sum())


def expected(layout, rank, x):
    """{view name: the bits it must hold}, by the layout oracle."""
    want = {}
    for t in layout["tensors"]:
        q = t["dst"].get("quant")
        payload, scales = quant_ref.quantize(x[t["name"]], q) if q else \
            (x[t["name"]], None)
        mine = shards.local_shards(layout, t, "dst").get(rank)
        if mine:
            want[t["name"]] = payload.flatten()[mine[1]].reshape(mine[0])
        if q:
            st = quant_ref.scale_tensor(t)
            mine = shards.local_shards(layout, st, "dst").get(rank)
            if mine:
                want[st["name"]] = scales.flatten()[mine[1]].reshape(mine[0])
    return want


def flashinfer_w13(fake, params, whole, m):
    """(experts, wrong elements): each w13_weight[j] and its scale_inv[j]
    (in `params`, the FP8 stand-ins of the fake's) against [up_t; gate_t]
    of the checkpoint's FP8 gate and up."""
    f, quant = m.moe_intermediate, {"block": [128, 128]}
    experts = bad = 0
    for name, stores in fake.stores.items():
        if ".experts." not in name or m.expert_names[0] not in name:
            continue
        (w13, j), = stores
        pname = next(n for n, p in fake.params if p is w13)
        w13 = params[pname]
        expert = name.split(".weight")[0] + ".weight"   # a copy's expert
        (qg, sg), (qu, su) = (quant_ref.quantize(whole[expert][a:a + f],
                                                 quant) for a in (0, f))
        t, ft = fake.moe_shard, w13.shape[1] // 2
        rows, srows = slice(t * ft, (t + 1) * ft), \
            slice(t * ft // 128, (t + 1) * ft // 128)
        bad += same(w13[j], torch.cat([qu[rows], qg[rows]]))
        bad += same(params[pname + "_scale_inv"][j],
                    torch.cat([su[srows], sg[srows]]))
        experts += 1
    return experts, bad


def build(comm, rank, cache, config, train, infer, layers, path):
    """(model, Infer, Layout, its JSON, plan) of a colocated refit, the layout
    written by rank 0 to `path` and compiled by every rank. `infer` may be
    Infer's fields as JSON (an expert_map)."""
    if infer.startswith("{"):
        infer = reshard.vllm.Infer(**json.loads(infer))
    m = test_names.model_of(config, 1, train, infer)
    lay = build_layout(config, train, infer, layers=int(layers),
                       colocated=True)
    if rank == 0:
        lay.write_json(path)
    comm.Barrier()
    with open(path) as f:
        layout = json.load(f)
    return m, infer, lay, layout, reshard.compile(path, backend="mpi",
                                                  cache_dir=cache)


def run(comm, rank, cache, print, config, train, infer, layers, work,
        source="fake"):
    """The refit of this rank; source "megatron-core" takes Megatron-Core's
    own GPTModel of the rank (megatron_model.py) instead of the fake."""
    m, infer, lay, layout, plan = build(comm, rank, cache, config, train,
                                        infer, layers,
                                        f"{work}/refit-fp8.json")
    x, whole = logical_values(layout)
    if source == "megatron-core":
        import megatron_model
        model = megatron_model.build_rank(m, train, int(layers), comm)
    else:
        model = test_names.megatron_params(m, train, rank,
                                           int(layers)).module()
    src = reshard.megatron_tensors(lay, model, rank)
    for name, view in src.items():
        t = next(t for t in layout["tensors"] if t["name"] == name)
        shape, linear = shards.local_shards(layout, t, "src")[rank]
        view.copy_(x[name].flatten()[linear].reshape(shape))
    first = lay.info["infer"]["ranks"][0]
    dst, experts, bad = {}, 0, 0
    if rank >= first:
        fake = test_names.vllm_params(m, infer, rank - first, int(layers))
        params = fp8_params(lay, fake, rank)
        dst = reshard.vllm_tensors(lay, params, rank)
    plan.run(src, dst, comm, verify=True)
    want = expected(layout, rank, x)
    bad = sum(same(dst[n], w) for n, w in want.items())

    missing = sorted(set(want) - set(dst))
    if dst:
        experts, wrong = flashinfer_w13(fake, params, whole, m)
        bad += wrong
    fp8 = sum(1 for n in dst if n.endswith(".scale"))
    ok = not bad and not missing
    print(f"rank {rank}: {'ok' if ok else 'WRONG'} {len(want)} views "
          f"({fp8} FP8 with scales), {experts} experts' w13 as FlashInfer "
          f"holds it, {bad} wrong, {len(missing)} unmapped", flush=True)
