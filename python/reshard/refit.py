"""A whole-model refit layout: Megatron-Core training -> vLLM inference.

build_layout() puts every parameter of a model on both sides; SCENARIOS
are the benchmark's bundled cases (bench/make_refit_scenario.py).
"""
from __future__ import annotations

import math
import os
from typing import Any, Dict, Mapping, Optional, Union

from .errors import ReshardError
from .layout import (DTYPE_BYTES, Layout, Sharding, cut_block_cached,
                     sharding_key)
from .mesh import _is_int
from .megatron import MegatronSide, Train, parse_train, pipeline_split
from .megatron import validate as validate_train
from .megatron import vocab_rows as megatron_vocab_rows
from .models import (Model, count_params, get_model, model_params,
                     scale_model)
from .topology import get_topology
from .vllm import (Infer, VllmSide, _is_flag, kv_split, padded_vocab,
                   parse_infer, per_stage_maps, pp_split, qkv_rank_rows,
                   shared_experts_replicated)
from .vllm import vocab_rows as vllm_vocab_rows
from .vllm import validate as validate_infer

_LLAMA = dict(
    model="llama-3.1-70b",
    # Megatron TP8 PP2 DP4 on 64 GPUs (80 layers -> 40 + 40) -> vLLM TP8
    # DP4 on 32 GPUs (a dense model's DP ranks are independent engines, so
    # this is the layout of engines=4 too). TP8 inside a node is the standard 70B
    # tensor-parallel width; NeMo RL's colocated Llama-3.3-70B recipe
    # (recipes/llm/performance/grpo-llama3.3-70b-instruct-4n8g.yaml) uses
    # TP4 PP8 with vLLM TP4 on fewer GPUs.
    train="tp=8,pp=2,dp=4", infer="tp=8,dp=4")
_QWEN = dict(
    model="qwen3-235b-a22b",
    # Megatron side verbatim from NeMo RL's
    # recipes/llm/performance/grpo-qwen3-235b-16n8g.yaml (16 nodes x 8 H100):
    # tensor_model_parallel_size 2 (sequence_parallel), context_parallel_size
    # 2, pipeline_model_parallel_size 8, expert_model_parallel_size 16,
    # num_layers_in_first/last_pipeline_stage 11 (94 = 11 + 6*12 + 11);
    # dp = 128/(2*2*8) = 4, etp 1, edp = 128/(16*8) = 1.
    # vLLM: one engine of tp=8, dp=8 with expert parallel over its 64 GPUs
    # (2 experts per GPU); 4 KV heads < tp 8, so KV heads are replicated 2x.
    train="tp=2,cp=2,pp=8,ep=16,etp=1,dp=4,first=11,last=11",
    infer="tp=8,dp=8,ep=1")
_DSV3 = dict(
    model="deepseek-v3",
    # Megatron side: Megatron-Bridge deepseek_v3_pretrain_config_32nodes
    # (recipes/deepseek/deepseek_v3.py, 32 nodes x 8 = 256 GPUs):
    # tensor_model_parallel_size 2, pipeline_model_parallel_size 8,
    # expert_model_parallel_size 32, expert_tensor_parallel_size 1;
    # dp = 256/(2*8) = 16, edp = 256/(32*8) = 1, 8 experts per EP rank.
    # Bridge sets the PP layout with an MTP stage; without MTP we use NeMo RL's
    # PP8 split for DeepSeek-V3 (recipes/llm/performance/
    # grpo-deepseek-v3-32n4g.yaml: num_layers_in_first_pipeline_stage 7,
    # last 6; 61 = 7 + 6*8 + 6).
    # vLLM: tp=8, dp=8 with expert parallel (64 GPUs, 4 experts per GPU);
    # MLA has 128 heads, no KV replication; shared experts replicated
    # (sequence-parallel MoE, spmoe=auto).
    train="tp=2,pp=8,ep=32,etp=1,dp=16,first=7,last=6",
    infer="tp=8,dp=8,ep=1")

# Layouts peers publish times for, verbatim. NeMo RL's nccl_reshard refit
# of DeepSeek-V3: Megatron TP1 PP16 EP16 DP16 (first stage 3 layers, last
# 2) on 256 H100 into 8 vLLM engines of TP32 without expert parallelism.
_DSV3_NEMO = dict(model="deepseek-v3",
                  train="tp=1,pp=16,ep=16,dp=16,first=3,last=2",
                  infer="tp=32,engines=8")
# NCCL M2N's GB200 benchmarks (64 of each 72-GPU rack): DeepSeek-V3 on 128
# trainer GPUs into 16 engines of TP8, Qwen3-235B-A22B on 64 into 8.
_DSV3_M2N = dict(model="deepseek-v3",
                 train="tp=1,pp=4,ep=16,dp=32,stages=16:15:15:15",
                 infer="tp=8,engines=16")
_QWEN_M2N = dict(model="qwen3-235b-a22b",
                 train="tp=2,cp=2,pp=4,ep=16,dp=4,stages=24:23:24:23",
                 infer="tp=8,engines=8")
# A Kimi-K2-class model (1.03 T parameters, 61 layers x 384 experts,
# 46,813 tensors): Megatron TP1 PP16 EP24 DP24 (first 3, last 2) on 384 H100
# into 12 vLLM engines of TP32, the NeMo RL pattern one size up.
_KIMI = dict(model="kimi-k2",
             train="tp=1,pp=16,ep=24,dp=24,first=3,last=2",
             infer="tp=32,engines=12")

# A GB200 NVL72 rack shared by trainer and inference GPUs: Qwen3-235B-A22B
# on 128 trainer GPUs (ranks 0-127) into one vLLM engine of TP8 DP2 with
# expert parallelism over its 16 GPUs (ranks 128-143), so rack 1 (ranks
# 72-143) holds 56 trainer and 16 inference GPUs and everything the engine
# needs from rack 0 enters a rack of 72 NICs.
_QWEN_SHARED = dict(model="qwen3-235b-a22b",
                    train=_QWEN["train"], infer="tp=8,dp=2,ep=1")

# The *-gb200 ones repeat the DGX layouts on the GB200 NVL72 topology, so
# that the topology is the only difference in a pair.
SCENARIOS: Dict[str, Dict[str, str]] = {
    "llama70b-dgx": dict(_LLAMA, topology="dgx-h100"),
    "qwen235b-dgx": dict(_QWEN, topology="dgx-h100"),
    "deepseek-v3-dgx": dict(_DSV3, topology="dgx-h100"),
    "llama70b-gb200": dict(_LLAMA, topology="gb200-nvl72"),
    "qwen235b-gb200": dict(_QWEN, topology="gb200-nvl72"),
    "deepseek-v3-gb200": dict(_DSV3, topology="gb200-nvl72"),
    "deepseek-v3-nemo-rl": dict(_DSV3_NEMO, topology="dgx-h100"),
    "deepseek-v3-m2n-gb200": dict(_DSV3_M2N, topology="gb200-nvl64"),
    "qwen235b-m2n-gb200": dict(_QWEN_M2N, topology="gb200-nvl64"),
    "kimi-k2-dgx": dict(_KIMI, topology="dgx-h100"),
    "qwen235b-gb200-shared": dict(_QWEN_SHARED, topology="gb200-nvl72"),
}


def _runs(rows):
    """Row indices -> [start, length] runs."""
    out = []
    for r in rows:
        if out and out[-1][0] + out[-1][1] == r:
            out[-1][1] += 1
        else:
            out.append([r, 1])
    return out


def _qkv_cuts(p, src, dst, m):
    """The pieces of a KV-split qkv tensor (_qkv_pieces), as dicts: TP
    ranks (Megatron tp, vLLM ts), first local rows (src, dst), rows."""
    smesh, sdims = src.place(p, m)
    whole = Sharding(smesh, sdims, *src.fused(p, m))
    # Row -> (vLLM TP ranks, offset); the offset is the same on replicas.
    held = {}
    for t in range(dst.i.tp):
        for off, r in enumerate(qkv_rank_rows(m, dst.i, t)):
            ts, o = held.setdefault(r, ([], off))
            assert o == off
            ts.append(t)
    cuts = []
    for tr in range(src.t.tp):
        rank = smesh.ranks[tr]          # dp 0 (cp 0), TP rank tr
        rows = [r for a, n in whole.segments(p.shape, rank)[0]
                for r in range(a, a + n)]
        for off, r in enumerate(rows):
            ts, voff = held[r]
            last = cuts[-1] if cuts else None
            if (last and last["tp"] == tr and last["ts"] == ts
                    and last["dst"] + len(last["rows"]) == voff
                    and last["src"] + len(last["rows"]) == off):
                last["rows"].append(r)
            else:
                cuts.append(dict(tp=tr, ts=ts, src=off, dst=voff, rows=[r]))
    for c in cuts:
        c["rows"] = _runs(c["rows"])
    return cuts


def _qkv_pieces(p, src, dst, m, cache):
    """vLLM replicates KV heads (tp > num_kv_heads), which one sharding of
    the fused tensor cannot say. The tensor is then cut into pieces: runs
    of rows that one Megatron TP rank holds contiguously in linear_qkv and
    the same vLLM TP ranks (one, or a KV head's replicas) contiguously in
    qkv_proj, each replicated over dp (and cp) and over the engines. A piece
    names the rows of the fused tensor it holds and where they start in
    each side's local fused buffer: every piece is a pointer on both."""
    key = tuple(p.shape)                # the same cuts in every layer
    if key not in cache:
        cache[key] = _qkv_cuts(p, src, dst, m)
    stage = src.stage(p.layer)
    rest = [[] for _ in p.shape[1:]]
    for k, c in enumerate(cache[key]):
        rows = sum(n for _, n in c["rows"])
        yield (f"{p.name}.part{k}", [rows] + p.shape[1:],
               Sharding(src.tp_rank_mesh(stage, c["tp"]), [[]] + rest),
               Sharding(dst.tp_mesh(c["ts"], m.kv_heads, dst.stage(p.layer)),
                        [[]] + rest),
               dict(fused_into=p.name, fused_rows=c["rows"],
                    fused_offset={"src": c["src"], "dst": c["dst"]}))


VOCAB_TENSORS = ("model.embed_tokens.weight", "model.embedding.weight",
                 "lm_head.weight")


def _vocab_padded(p, src, dst, m) -> bool:
    """An embedding or output layer that a side holds padded: rank r's
    rows start at r*n for an n other than the vocab / tp of torch.chunk."""
    return p.name in VOCAB_TENSORS and (
        megatron_vocab_rows(m, src.t) * src.t.tp != p.shape[0] or
        vllm_vocab_rows(m, dst.i) * dst.i.tp != p.shape[0])


def _vocab_pieces(p, src, dst, m):
    """A padded vocab (Megatron's vocab_pad=, vLLM's multiple of 64): TP
    rank r of a side holds padded rows r*n to r*n + n - 1, its last ranks
    padding, which torch.chunk of the vocab cannot say. As for qkv, the
    tensor is cut into pieces: the rows one Megatron TP rank and one vLLM
    TP rank both hold, each a run of both ranks' buffers, replicated over
    their replicas; fused_buffer_rows gives each side's buffer rows (the
    padding is in no piece, so nothing reads or writes it)."""
    ns, nd = megatron_vocab_rows(m, src.t), vllm_vocab_rows(m, dst.i)
    stage, v = src.stage(p.layer), p.shape[0]
    rest = [[] for _ in p.shape[1:]]
    k = 0
    for r in range(src.t.tp):
        a, end = r * ns, min((r + 1) * ns, v)
        while a < end:
            t = a // nd
            b = min(end, (t + 1) * nd)
            yield (f"{p.name}.part{k}", [b - a] + p.shape[1:],
                   Sharding(src.tp_rank_mesh(stage, r), [[]] + rest),
                   Sharding(dst.vocab_mesh(p, m, t), [[]] + rest),
                   dict(fused_into=p.name, fused_rows=[[a, b - a]],
                        fused_offset={"src": a - r * ns, "dst": a - t * nd},
                        fused_buffer_rows={"src": ns, "dst": nd}))
            k += 1
            a = b


def _local_rows(side: Sharding, shape, cache) -> Optional[int]:
    """The rows every rank of a side holds of a tensor split along dim 0
    (None if they differ), cached: every expert of a layer asks the
    same."""
    key = sharding_key(side, tuple(shape), "rows")
    if key not in cache:
        rows = {side.stored_shape(shape, r)[0] for r in side.mesh.ranks}
        cache[key] = rows.pop() if len(rows) == 1 else None
    return cache[key]


def _whole_blocks(side: Sharding, shape, b, cache) -> bool:
    """side.holds_whole_blocks(shape, b), cached (NeMo RL's 256-rank
    meshes took a minute for fp8=mx uncached)."""
    return cut_block_cached(side, shape, b, cache) is None


def _w13_pieces(p, s_side, name, d_side, extra, b, cache):
    """A routed expert's w13 that vLLM stores [up_t; gate_t] (w13=up_gate)
    as two pieces, gate and up, for FP8: a quantized destination has no
    storage order, but each half is a run of rows of both sides' buffers
    (Megatron's [gate_r; up_r], vLLM's [up_t; gate_t]), so each piece is
    quantized in logical order and lands at its rows. None where a half
    is not whole blocks of every rank's buffer (then the tensor stays at
    the source's precision). Under EPLB every copy's pieces are rows of
    the expert (fused_into: the slot expert_slots gives the rank), and a
    copy's are copies of the first's (copy_of)."""
    f = p.shape[0] // 2
    shape = [f] + p.shape[1:]
    src = Sharding(s_side.mesh, s_side.dims)
    dst = Sharding(d_side.mesh, d_side.dims)
    fs, fd = _local_rows(src, shape, cache), _local_rows(dst, shape, cache)
    if fs is None or fd is None or fd % b[0] or \
            not _whole_blocks(dst, shape, b, cache):
        return None
    out = []
    for k, (first, src_off, dst_off) in enumerate(((0, 0, fd),
                                                   (f, fs, 0))):
        piece = dict(extra, fused_into=p.name, fused_rows=[[first, f]],
                     fused_offset={"src": src_off, "dst": dst_off})
        if "copy_of" in extra:
            piece["copy_of"] = f"{p.name}.part{k}"
        out.append((f"{name}.part{k}", shape, Sharding(src.mesh, src.dims),
                    Sharding(dst.mesh, dst.dims), piece))
    return out


# Linear weights vLLM keeps unquantized: the MoE router, Qwen3-Next's
# shared-expert gate (quant_config=None) and in_proj_ba ("doesn't support
# blockwise fp8").
_NOT_FP8 = ("mlp.gate.weight", "mlp.shared_expert_gate.weight",
            "linear_attn.in_proj_ba.weight", "mlp.router.weight")


def _fp8_eligible(p) -> bool:
    """A linear weight FP8 checkpoints quantize: 2-D, inside a layer, not a
    norm or one of _NOT_FP8 (embeddings and the output layer stay too)."""
    return (len(p.shape) == 2 and isinstance(p.layer, int) and
            p.name.endswith(".weight") and "norm" not in p.name and
            not p.name.endswith(_NOT_FP8))


def _count(v: Any, key: str) -> int:
    """An integer argument (numpy's too) as a Python int."""
    if not _is_int(v):
        raise ReshardError(f"{key}={v!r}: give an integer")
    return int(v)


def build_layout(model: Union[Model, str, os.PathLike],
                 train: Union[str, Train], infer: Union[str, Infer],
                 topology: Union[str, Mapping[str, Any]] = "dgx-h100",
                 layers: Optional[int] = None, scale_down: int = 1,
                 colocated: bool = False,
                 infer_first_rank: Optional[int] = None,
                 scenario: Optional[str] = None) -> Layout:
    """The refit Layout (its .info holds the scenario's figures).

    model: a Model, a bundled name or a config.json path; train/infer:
    spec strings or Train/Infer; topology: a preset name or a dict.
    """
    m = get_model(model)
    t = parse_train(train) if isinstance(train, str) else train
    i = parse_infer(infer) if isinstance(infer, str) else infer
    if not isinstance(t, Train) or not isinstance(i, Infer):
        raise ReshardError("train/infer must be spec strings, Train, Infer")
    layers, infer_first_rank = (
        None if v is None else _count(v, key)
        for v, key in ((layers, "layers"),
                       (infer_first_rank, "infer_first_rank")))
    scale_down = _count(scale_down, "scale_down")
    if infer_first_rank is not None and infer_first_rank < 0:
        raise ReshardError(f"infer_first_rank={infer_first_rank}: give a "
                           f"rank >= 0")
    if not _is_flag(colocated):
        raise ReshardError(f"colocated={colocated!r}: give True or False")
    colocated = bool(colocated)
    if scenario is not None and not isinstance(scenario, str):
        raise ReshardError(f"scenario={scenario!r}: give a name")
    topo = get_topology(topology)
    n_layers = m.layers if layers is None else layers
    if not 0 <= n_layers <= m.layers:
        raise ReshardError(f"layers (--layers) must be in [0, {m.layers}], "
                           f"not {n_layers}")
    if scale_down < 1:
        raise ReshardError(f"scale_down (--scale-down) must be >= 1, not "
                           f"{scale_down}")
    if scale_down != 1 and t.padded_vocab is not None:
        raise ReshardError("padded_vocab= counts the full model's rows: "
                           "with scale_down (--scale-down), give vocab_pad=")
    full = count_params(model_params(m))
    sm = scale_model(m, scale_down, (t.tp, i.tp))
    err = validate_train(sm, t) + validate_infer(sm, i)
    if err:
        raise ReshardError("; ".join(err))
    counts = pipeline_split(n_layers, t)
    notes = []
    if t.first is None and t.stages is None and t.layout is None and \
            n_layers % t.pp:
        notes.append(f"{n_layers} layers do not split evenly over pp={t.pp} "
                     f"(Megatron would need first=/last=); using {counts}")

    if infer_first_rank is None:
        infer_first_rank = 0 if colocated else t.world
    src = MegatronSide(t, n_layers)
    dst = VllmSide(i, infer_first_rank, n_layers)
    split = kv_split(sm, i)

    params = model_params(sm, n_layers)
    out = Layout(topology=topo)
    cuts, held = {}, {}         # caches: qkv cuts, what shards hold
    fp8_done, fp8_left = 0, []
    for p in params:
        quant = i.fp8_quant(len(p.shape)) if _fp8_eligible(p) else None
        if i.fp8 and p.role == "glu" and p.name.endswith(".weight"):
            # gpt-oss's interleaved gate_up: vLLM's FP8 block grid runs
            # over its interleaved rows, which no [2, f, h] block states.
            fp8_left.append(p.name)
        b = None if quant is None else \
            [128] * 2 if "block" in quant else [1, quant["mx"]]
        if p.role == "qkv" and split:
            for name, shape, s, d, extra in _qkv_pieces(p, src, dst, sm,
                                                        cuts):
                # A piece is rows of each vLLM rank's fused qkv_proj, whose
                # blocks (weight_scale_inv's rows) start at its row 0: the
                # piece is FP8 where it is made of those blocks.
                if quant is not None:
                    if extra["fused_offset"]["dst"] % b[0] or \
                            shape[0] % b[0]:
                        fp8_left.append(name)
                    else:
                        d.quant = quant
                        fp8_done += 1
                out.add(name, shape, p.dtype, s, d, **extra)
            continue
        if _vocab_padded(p, src, dst, sm):
            for name, shape, s, d, extra in _vocab_pieces(p, src, dst, sm):
                out.add(name, shape, p.dtype, s, d, **extra)
            continue
        smesh, sdims = src.place(p, sm)
        s_side = Sharding(smesh, sdims, *src.fused(p, sm),
                          dim_order=src.dim_order(p))
        d_order = dst.dim_order(p)
        if p.expert is not None and i.eplb:     # a tensor per copy index
            dsts = [(name, Sharding(mesh, [[] for _ in p.shape],
                                    *dst.fused(p, sm), dim_order=d_order),
                     extra)
                    for name, mesh, extra in dst.expert_tensors(p, sm)]
        else:
            dmesh, ddims = dst.place(p, sm)
            dsts = [(p.name, Sharding(dmesh, ddims, *dst.fused(p, sm),
                                      dim_order=d_order), {})]
        if p.role == "glu":
            # Both frameworks hold the gate_up as 2-D [2f/tp(, h)]: the
            # buffer's first two dims merged (names.py views it).
            for _, _, extra in dsts:
                extra["merge_dims"] = [0, 1]
        for name, d_side, extra in dsts:
            pieces = quant is not None and p.expert is not None and \
                d_side.order and _w13_pieces(p, s_side, name, d_side,
                                             extra, b, held)
            if pieces:
                for piece, shape, s, d, more in pieces:
                    d.quant = quant
                    fp8_done += 1
                    out.add(piece, shape, p.dtype, s, d, **more)
                continue
            if quant is not None:
                # Only where vLLM's shards hold whole blocks (it refuses a
                # TP split that cuts one); a trainer shard that cuts one
                # leaves the quantizing to the inference ranks
                # (reshard-quantize).
                if d_side.order or d_side.dim_order or \
                        not _whole_blocks(d_side, p.shape, b, held):
                    fp8_left.append(name)
                else:
                    d_side.quant = quant
                    fp8_done += 1
            out.add(name, p.shape, p.dtype, s_side, d_side, **extra)
    out._meshes = list(src.meshes.values()) + list(dst.meshes.values())

    nbytes = sum(math.prod(p.shape) * DTYPE_BYTES[p.dtype] for p in params)
    out.info = {
        "name": scenario, "model": m.name, "hf_id": m.hf_id,
        "layers": n_layers, "scale_down": scale_down,
        "train": {"framework": "megatron-core", "tp": t.tp, "cp": t.cp,
                  "dp": t.dp, "pp": t.pp, "ep": t.ep, "etp": t.etp,
                  "edp": t.edp, "ranks": [0, t.world - 1],
                  "layers_per_stage": counts},
        "infer": {"framework": "vllm", "tp": i.tp, "dp": i.dp,
                  "expert_parallel": i.ep,
                  "shared_experts_replicated":
                      shared_experts_replicated(sm, i),
                  "kv_head_replicas": (i.tp // sm.kv_heads if split else 1),
                  "ranks": [infer_first_rank,
                            infer_first_rank + i.world - 1]},
        "params": count_params(params), "bytes": nbytes,
        "full_model_params": full, "public_params": m.public_params,
        "notes": notes,
    }
    if i.engines != 1:          # only then, so older layouts stay the same
        out.info["infer"]["engines"] = i.engines
    if i.w13 != "gate_up":      # only then, so older layouts stay the same
        out.info["infer"]["w13"] = i.w13
    if t.layout is not None:
        out.info["train"]["pipeline_layout"] = str(t.layout)
        # [first, last] layer of each model chunk of each stage ([]: none)
        out.info["train"]["chunk_layers"] = [
            [[c[0], c[-1]] if c else [] for c in chunks]
            for chunks in t.layout.chunk_layers()]
    if t.vpp != 1:
        out.info["train"]["vpp"] = t.vpp
    if t.vpp != 1 and t.layout is None:
        out.info["train"]["layers_per_chunk"] = [n // t.vpp
                                                 for n in counts]
    if t.vocab_pad is not None:
        out.info["train"]["vocab_pad"] = t.vocab_pad
    if megatron_vocab_rows(sm, t) * t.tp != sm.vocab:
        out.info["train"]["padded_vocab"] = megatron_vocab_rows(sm, t) * t.tp
    if padded_vocab(sm) != sm.vocab:
        out.info["infer"]["padded_vocab"] = padded_vocab(sm)
    if i.pcp != 1:
        out.info["infer"]["pcp"] = i.pcp
    if i.pp != 1:
        out.info["infer"]["pp"] = i.pp
        out.info["infer"]["layers_per_stage"] = pp_split(n_layers, i)
    if i.placement != "linear":
        out.info["infer"]["expert_placement"] = i.placement
    if i.eplb:
        out.info["infer"]["eplb"] = {
            "redundant": i.redundant,
            "map": "initial" if i.expert_map is None else
            "per stage" if per_stage_maps(i) else
            "one row" if len(i.expert_map) == 1 else "per MoE layer"}
    if i.fp8:
        # Weights left at the source's precision are named: vLLM would
        # refuse FP8 for them (a shard that splits a block), or gpt-oss's
        # interleaved gate_up, which no [2, f, h] block states.
        out.info["infer"]["fp8"] = {"format": i.fp8, "quantized": fp8_done,
                                    "left": len(fp8_left)}
        if fp8_left:
            notes.append(f"fp8: {len(fp8_left)} linear weights stay "
                         f"{params[0].dtype} (a shard splits a block, or "
                         f"gpt-oss's interleaved gate_up), e.g. "
                         f"{fp8_left[0]}")
    return out
