"""The layout's tensors as views of the parameters a framework holds.

    src = megatron_tensors(layout, megatron_model, rank)  # trainer ranks
    dst = vllm_tensors(layout, vllm_model, rank)          # inference ranks
    plan.run(src, dst, comm)

A layout names its tensors as the Hugging Face checkpoint does, except
where vLLM fuses checkpoint tensors (docs/Python.md "Tensor names and
logical shapes"). These helpers find, for every layout tensor a rank holds,
the framework's parameter and the contiguous view of it that is this rank's
shard: the parameter itself, one expert of a stacked expert tensor, or the
rows of a fused buffer that a piece covers (a KV-replicated q/k/v, or a
padded vocab's embedding and output layer). The
conventions, and the framework files they mirror, are in docs/Python.md
"Mapping framework parameters".
"""
from __future__ import annotations

import math
import os
import re
from typing import (Any, Callable, Dict, List, Mapping, Optional,
                    Sequence, Tuple, Union)

from .errors import ReshardError, read_json
from .layout import Layout, Sharding
from .mesh import DeviceMesh, _is_int
from .layout_json import check_layout_json
from .vllm_kernels import check_moe_kernels

__all__ = ["megatron_tensors", "vllm_tensors"]

LayoutLike = Union[Layout, Mapping[str, Any], str, os.PathLike]
ParamsLike = Any
"""An iterable of (name, tensor) pairs (model.named_parameters()), a
mapping name -> tensor, or a module (anything with named_parameters())."""

_LAYER = re.compile(r"model\.layers\.(\d+)\.(.+)\Z")
_EXPERT = re.compile(r"(mlp|block_sparse_moe)\.experts\.(\d+)\."
                     r"(gate_up_proj|down_proj|w13|w2)\.(weight|bias)\Z")
_FC1 = ("gate_up_proj", "w13")

# Megatron-Core GPTModel names of the layout's per-layer tensors, after
# "decoder.layers.{stage-local layer}.": alternatives in order (Transformer
# Engine spec first, where it fuses a norm into the next linear; then the
# local spec). Megatron-Bridge's bridges map the same pairs
# (megatron/bridge/models/{llama,qwen,deepseek}/*.py mapping_registry).
_MEGATRON_LAYER = {
    "input_layernorm.weight": ("self_attention.linear_qkv.layer_norm_weight",
                               "self_attention.in_proj.layer_norm_weight",
                               "input_layernorm.weight"),
    "self_attn.qkv_proj.weight": ("self_attention.linear_qkv.weight",),
    "self_attn.qkv_proj.bias": ("self_attention.linear_qkv.bias",),
    "self_attn.q_norm.weight": ("self_attention.q_layernorm.weight",),
    "self_attn.k_norm.weight": ("self_attention.k_layernorm.weight",),
    "self_attn.o_proj.weight": ("self_attention.linear_proj.weight",),
    "self_attn.o_proj.bias": ("self_attention.linear_proj.bias",),
    # MLA (megatron/core/transformer/multi_latent_attention.py).
    "self_attn.q_a_layernorm.weight": (
        "self_attention.linear_q_up_proj.layer_norm_weight",
        "self_attention.q_layernorm.weight"),
    "self_attn.q_b_proj.weight": ("self_attention.linear_q_up_proj.weight",),
    "self_attn.q_proj.weight": ("self_attention.linear_q_proj.weight",),
    "self_attn.kv_a_proj_with_mqa.weight": (
        "self_attention.linear_kv_down_proj.weight",),
    "self_attn.kv_a_layernorm.weight": (
        "self_attention.linear_kv_up_proj.layer_norm_weight",
        "self_attention.kv_layernorm.weight"),
    "self_attn.kv_b_proj.weight": ("self_attention.linear_kv_up_proj.weight",),
    # Dense layers fuse the pre-MLP norm into linear_fc1 (TE); MoE layers
    # keep pre_mlp_layernorm.
    "post_attention_layernorm.weight": ("mlp.linear_fc1.layer_norm_weight",
                                        "pre_mlp_layernorm.weight"),
    "mlp.gate_up_proj.weight": ("mlp.linear_fc1.weight",),
    "mlp.gate_up_proj.bias": ("mlp.linear_fc1.bias",),
    "mlp.down_proj.weight": ("mlp.linear_fc2.weight",),
    "mlp.down_proj.bias": ("mlp.linear_fc2.bias",),
    "mlp.gate.weight": ("mlp.router.weight",),
    "block_sparse_moe.gate.weight": ("mlp.router.weight",),
    "mlp.gate.e_score_correction_bias": ("mlp.router.expert_bias",),
    "mlp.shared_experts.gate_up_proj.weight": (
        "mlp.shared_experts.linear_fc1.weight",),
    "mlp.shared_experts.down_proj.weight": (
        "mlp.shared_experts.linear_fc2.weight",),
    # Qwen3-Next: one gated shared expert (shared_experts.py's gate_weight),
    # and Gated DeltaNet (megatron/core/ssm/gated_delta_net.py), whose
    # in_proj holds in_proj_qkvz and in_proj_ba (_gdn_in_proj).
    "mlp.shared_expert.gate_up_proj.weight": (
        "mlp.shared_experts.linear_fc1.weight",),
    "mlp.shared_expert.down_proj.weight": (
        "mlp.shared_experts.linear_fc2.weight",),
    "mlp.shared_expert_gate.weight": ("mlp.shared_experts.gate_weight",),
    "linear_attn.conv1d.weight": ("self_attention.conv1d.weight",),
    "linear_attn.dt_bias": ("self_attention.dt_bias",),
    "linear_attn.A_log": ("self_attention.A_log",),
    "linear_attn.norm.weight": ("self_attention.out_norm.weight",),
    "linear_attn.out_proj.weight": ("self_attention.out_proj.weight",),
    # gpt-oss under vLLM's names (gpt_oss.py: attn., mlp.router), as
    # Megatron-Bridge's GPT-OSS bridge maps them (the sinks are
    # TEDotProductAttention's softmax_offset).
    "attn.qkv_proj.weight": ("self_attention.linear_qkv.weight",),
    "attn.qkv_proj.bias": ("self_attention.linear_qkv.bias",),
    "attn.o_proj.weight": ("self_attention.linear_proj.weight",),
    "attn.o_proj.bias": ("self_attention.linear_proj.bias",),
    "attn.sinks": ("self_attention.core_attention.softmax_offset",),
    "mlp.router.weight": ("mlp.router.weight",),
    "mlp.router.bias": ("mlp.router.bias",),
}
_GDN_IN_PROJ = ("linear_attn.in_proj_qkvz.weight",
                "linear_attn.in_proj_ba.weight")
_MEGATRON_TOP = {
    "model.embed_tokens.weight": ("embedding.word_embeddings.weight",),
    "model.embedding.weight": ("embedding.word_embeddings.weight",),
    "model.norm.weight": ("decoder.final_layernorm.weight",),
    "lm_head.weight": ("output_layer.weight",),
}
# MLA's fused_qkv_a_proj is two Megatron parameters, in this order.
_MLA_A = ("self_attention.linear_q_down_proj.weight",
          "self_attention.linear_kv_down_proj.weight")


class _Entry:
    """One layout tensor: name, global shape, dtype (its JSON name), both
    sides, JSON extras."""
    __slots__ = ("name", "shape", "src", "dst", "extra", "dtype")

    def __init__(self, name, shape, src, dst, extra, dtype=None):
        self.name, self.shape = name, list(shape)
        self.src, self.dst, self.extra = src, dst, extra
        self.dtype = dtype


def _read_path(layout: LayoutLike) -> Union[Layout, Mapping[str, Any]]:
    """The layout itself, a .json path read as its dict."""
    if not isinstance(layout, (str, os.PathLike)):
        return layout
    path = os.fspath(layout)
    if not path.endswith(".json"):
        raise ReshardError(f"{path}: give the layout as a reshard.Layout, "
                           f"its JSON dict or a .json file")
    return read_json(path)


def _entries(layout: LayoutLike) -> List[_Entry]:
    """The layout's tensors, from a Layout, its JSON dict or a .json path."""
    if isinstance(layout, Layout):
        return _with_scales([_Entry(t.name, t.shape, t.src, t.dst, t.extra,
                                    t.dtype) for t in layout.tensors])
    layout = _read_path(layout)
    if not isinstance(layout, Mapping) or "tensors" not in layout or \
            "meshes" not in layout:
        raise ReshardError("layout: a reshard.Layout, a layout JSON dict "
                           "(with 'meshes' and 'tensors') or a .json path")
    check_layout_json(layout)
    meshes: Dict[str, DeviceMesh] = {}

    def mesh(name):
        if name not in meshes:
            m = layout["meshes"].get(name)
            if m is None:
                raise ReshardError(f"layout: no mesh {name!r}")
            meshes[name] = DeviceMesh(_nest(m["ranks"], m["shape"]),
                                      m["axes"], name=name)
        return meshes[name]

    def side(t, key):
        s = t[key]
        try:
            return Sharding(mesh(s["mesh"]), s["dims"], s.get("blocks"),
                            s.get("order"), s.get("quant"),
                            s.get("dim_order"))
        except (TypeError, ValueError, KeyError, AttributeError) as e:
            raise ReshardError(f"layout: tensor {t['name']!r}.{key}: "
                               f"{type(e).__name__}: {e}") from None

    out = []
    for t in layout["tensors"]:
        extra = {k: v for k, v in t.items()
                 if k not in ("name", "shape", "dtype", "src", "dst")}
        out.append(_Entry(t["name"], t["shape"], side(t, "src"),
                          side(t, "dst"), extra, t.get("dtype")))
    return _with_scales(out)


def _with_scales(entries: List[_Entry]) -> List[_Entry]:
    """Each quantized destination's scales as a tensor of their own,
    `<name>.scale` (docs/Layout.md "Quantized destinations"): the
    destination's sharding with every size divided by the block sizes, and
    no source (the plan's senders compute them)."""
    out = []
    for e in entries:
        out.append(e)
        q = e.dst.quant
        if not q:
            continue
        n = len(e.shape)
        b = q["block"] if "block" in q else [1] * (n - 1) + [q["mx"]]
        shape = [-(-size // bb) for size, bb in zip(e.shape, b)]
        blocks = {d: [-(-size // b[d]) for size in sizes]
                  for d, sizes in e.dst.blocks.items()}
        dst = Sharding(e.dst.mesh, e.dst.dims, blocks)
        extra = {"scales_of": e.name, "quant": dict(q)}
        for key in ("expert_slots", "expert_stack", "copy_of"):
            if key in e.extra:          # stacked as the weight (EPLB)
                extra[key] = e.extra[key]
        into = e.extra.get("fused_into")
        if into is not None:    # a piece's scales: rows of the buffer's
            extra["fused_into"] = into + ".scale"
            extra["fused_offset"] = {"dst": _offset(e, "dst") // b[0]}
        out.append(_Entry(e.name + ".scale", shape, None, dst, extra))
    return out


def _nest(flat, shape):
    if not shape:
        return flat[0]
    step = len(flat) // shape[0]
    return [_nest(flat[i * step:(i + 1) * step], shape[1:])
            for i in range(shape[0])]


def _pairs(params: ParamsLike, buffers: bool
           ) -> Tuple[List[Tuple[str, Any]], set]:
    """(name, tensor) pairs and the names that are buffers."""
    if hasattr(params, "named_parameters"):
        pairs = _pair_list(params.named_parameters, "named_parameters()")
        bufs = _pair_list(params.named_buffers, "named_buffers()") \
            if buffers and hasattr(params, "named_buffers") else []
        return pairs + bufs, {n for n, _ in bufs}
    if isinstance(params, Mapping):
        return _pair_list(params.items, "params"), set()
    if isinstance(params, (str, bytes)):
        raise ReshardError("params: give model.named_parameters(), a dict of "
                           "name -> tensor, or the model")
    return _pair_list(lambda: params, "params"), set()


def _pair_list(get: Callable[[], Any], what: str) -> List[Tuple[str, Any]]:
    """(name, tensor) pairs, each a name and something with a shape."""
    try:
        pairs = list(get())
    except TypeError:
        raise ReshardError(f"{what}: not an iterable of (name, tensor) "
                           f"pairs") from None
    for i, p in enumerate(pairs):
        if not (isinstance(p, tuple) and len(p) == 2 and
                isinstance(p[0], str)):
            raise ReshardError(f"{what}[{i}]: {type(p).__name__} is not "
                               f"a (name, tensor) pair")
        if not isinstance(getattr(p[1], "shape", None), tuple):
            raise ReshardError(f"{what}: {p[0]!r} is a "
                               f"{type(p[1]).__name__}, not a tensor")
    return pairs


class _Table:
    """Parameters by normalized name; tracks which ones were used."""

    def __init__(self, pairs, buffers, normalize):
        self.by_name: Dict[str, Any] = {}
        self.original: Dict[str, str] = {}
        self.order: List[str] = []
        self.buffers = set()
        for raw, t in pairs:
            name = normalize(raw)
            if name in self.by_name:
                if self.by_name[name] is not t:
                    raise ReshardError(
                        f"parameters {self.original[name]!r} and {raw!r} "
                        f"are both {name!r}")
                continue
            self.by_name[name] = t
            self.original[name] = raw
            self.order.append(name)
            if raw in buffers:
                self.buffers.add(name)
        self.used: set = set()

    def get(self, names: Sequence[str]) -> Optional[Tuple[str, Any]]:
        for n in names:
            if n in self.by_name:
                self.used.add(n)
                return n, self.by_name[n]
        return None

    def unused(self) -> List[str]:
        return [self.original[n] for n in self.order
                if n not in self.used and n not in self.buffers]


def _shape(t: Any) -> Tuple[int, ...]:
    return tuple(int(x) for x in t.shape)


def _plain(t: Any) -> Any:
    """A torch tensor without autograd history (same storage)."""
    detach = getattr(t, "detach", None)
    return detach() if callable(detach) else t


class _Miss(Exception):
    pass


class _Ctx:
    """What a rank's views need beyond one tensor: the parameter table of
    each model chunk and where each chunk's layer 0 is (Megatron numbers a
    chunk's layers from 0; a stage has one chunk, or vpp interleaved ones),
    the experts it holds in each layer (EP-local numbering) and the rows of
    each fused buffer it holds in pieces."""

    def __init__(self, held: List[Tuple[_Entry, List[int]]], side: str,
                 layer_offset: Optional[int], tables: List["_Table"],
                 chunked: bool, listed: bool,
                 numbered: Optional[List[Dict[int, int]]] = None):
        layers = []
        self.experts: Dict[Tuple[int, str], List[int]] = {}
        self.fused_rows: Dict[str, int] = {}
        self.shapes = {e.name: shape for e, shape in held}
        for e, shape in held:
            m = _LAYER.match(e.name)
            if m:
                layers.append(int(m.group(1)))
            into = e.extra.get("fused_into")
            # An expert's w13, whole or a piece of it (w13=up_gate, FP8).
            x = _expert_of(into or e.name)
            if x and x[2] in _FC1 and x[3] == "weight":
                self.experts.setdefault((x[0], x[1]), []).append(x[4])
            if into is not None:
                # The pieces tile the buffer, or leave its padding out and
                # say its rows (fused_buffer_rows: a padded vocab).
                end = _buffer_rows(e, side)
                if end is None:
                    end = _offset(e, side) + shape[0]
                self.fused_rows[into] = max(self.fused_rows.get(into, 0), end)
        self._index = {}
        for key, v in self.experts.items():
            v[:] = sorted(set(v))       # a w13's two pieces name it twice
            self._index[key] = {e: j for j, e in enumerate(v)}
        self.layer_offset = layer_offset if layer_offset is not None else \
            (min(layers) if layers else 0)
        self.tables = tables
        # Each chunk's {global layer: local index}, where known (Megatron's
        # layer_number, or a layer_offset per chunk): then chunks need not
        # be runs (a pipeline layout may leave one empty, or two adjacent).
        self.numbered = numbered
        self.runs = _runs(sorted(set(layers)))  # [first, last] of each
        self._check_chunks(chunked, listed, layer_offset)

    def _check_chunks(self, chunked: bool, listed: bool,
                      layer_offset: Optional[int]):
        if self.numbered is not None:
            return
        runs = _spell(self.runs)
        if listed and layer_offset is not None:
            raise ReshardError("layer_offset= applies to one model, not a "
                               "list of model chunks")
        if listed and self.runs and len(self.runs) != len(self.tables):
            raise ReshardError(
                f"{len(self.tables)} model chunks given, but the layout "
                f"gives this rank {len(self.runs)} runs of layers "
                f"({runs}): give one chunk per run, in order, or each "
                f"chunk's first layer in layer_offset= (a pipeline "
                f"layout's chunks may be empty or adjacent)")
        if chunked and not listed and len(self.runs) > 1:
            raise ReshardError(
                f"the layout gives this rank {len(self.runs)} runs of layers "
                f"({runs}), Megatron's virtual pipeline model chunks: pass "
                f"the list of model chunks")

    def layer(self, layer: int) -> Tuple["_Table", int, str]:
        """(table, local index, how for messages) of a global layer."""
        if self.numbered is not None:
            return self._numbered(layer)
        if len(self.tables) == 1:
            local = layer - self.layer_offset
            where = (f" (layer {layer} is layer {local} of this rank's "
                     f"pipeline stage)" if self.layer_offset else "")
            return self.tables[0], local, where
        for v, (a, b) in enumerate(self.runs):
            if a <= layer <= b:
                return (self.tables[v], layer - a,
                        f" (layer {layer} is layer {layer - a} of model "
                        f"chunk {v})")
        raise _Miss(f"layer {layer} is in none of this rank's model chunks")

    def _numbered(self, layer: int) -> Tuple["_Table", int, str]:
        for v, local in enumerate(self.numbered):
            if layer in local:
                chunk = f" of model chunk {v}" if len(self.tables) > 1 \
                    else ""
                return (self.tables[v], local[layer],
                        f" (layer {layer} is layer {local[layer]}{chunk})")
        held = "; ".join(f"chunk {v}: {_spell(_runs(sorted(local)))}"
                         for v, local in enumerate(self.numbered))
        raise _Miss(f"layer {layer} is in none of this rank's model chunks "
                    f"({held})")

    def expert(self, layer: int, moe: str, e: int) -> Tuple[int, int]:
        """(local index, local count) of expert e of a layer."""
        index = self._index.get((layer, moe), {})
        if e not in index:
            raise ReshardError(f"layer {layer}: expert {e}'s down projection "
                               f"is held without its gate_up projection")
        return index[e], len(index)


def _runs(layers: List[int]) -> List[List[int]]:
    """[first, last] of each run of consecutive sorted layer numbers."""
    runs: List[List[int]] = []
    for x in layers:
        if runs and runs[-1][1] == x - 1:
            runs[-1][1] = x
        else:
            runs.append([x, x])
    return runs


def _spell(runs: List[List[int]]) -> str:
    """'0-2, 9' of runs ('none' for no run)."""
    return ", ".join(f"{a}-{b}" if a != b else f"{a}"
                     for a, b in runs) or "none"


_LAYER_MODULE = re.compile(r"decoder\.layers\.(\d+)$")
_LAYER_PARAM = re.compile(r"decoder\.layers\.(\d+)\.")


def _numbering(models: List[Any], tables: List["_Table"],
               layer_offset: Any, normalize: Callable[[str], str]
               ) -> Optional[List[Dict[int, int]]]:
    """Each model chunk's {global layer: local index}: from a layer_offset
    per chunk, or from the layer_number (1-based, global) Megatron-Core's
    TransformerLayer keeps; None where neither is there."""
    if isinstance(layer_offset, (list, tuple)):
        out: List[Dict[int, int]] = []
        end = 0
        for v, (off, t) in enumerate(zip(layer_offset, tables)):
            n = 1 + max((int(m.group(1)) for m in map(_LAYER_PARAM.match,
                                                      t.by_name) if m),
                        default=-1)
            if n and off < end:
                # Megatron's chunks go up in layer number: offsets that do
                # not would map layers to another chunk's weights.
                raise ReshardError(
                    f"layer_offset={list(layer_offset)}: chunk {v} starts "
                    f"at layer {off}, inside or before the layers of the "
                    f"chunks before it (which end at {end - 1})")
            out.append({off + i: i for i in range(n)})
            end = off + n if n else end
        return out
    if layer_offset is not None or not all(hasattr(c, "named_modules")
                                           for c in models):
        return None
    out = []
    for c in models:
        local = {}
        for name, mod in c.named_modules():
            m = _LAYER_MODULE.fullmatch(normalize(name))
            number = getattr(mod, "layer_number", None)
            if m and isinstance(number, int):
                local[number - 1] = int(m.group(1))
        out.append(local)
    return out if any(out) else None


def _scenario_chunks(layout: Any, rank: int, side: str, n: int
                     ) -> Optional[List[Dict[int, int]]]:
    """Each model chunk's {global layer: local index} from the layers a
    pipeline layout gives each chunk of the rank's stage, which the presets
    record (scenario.train.chunk_layers: [first, last] or [] per chunk):
    then a list of dicts needs no layer_offset, even where a chunk is
    empty or follows another without a gap. None without that record or
    when the chunk count differs."""
    info = layout.info if isinstance(layout, Layout) else \
        layout.get("scenario") if isinstance(layout, Mapping) else None
    train = info.get("train") if isinstance(info, Mapping) else None
    if side != "src" or not isinstance(train, Mapping) or \
            train.get("framework") != "megatron-core":
        return None
    chunks = train.get("chunk_layers")
    sizes = [train.get(k) for k in ("tp", "cp", "dp")]
    if not isinstance(chunks, list) or not all(_is_index(x) and x
                                               for x in sizes):
        return None
    stage = rank // math.prod(sizes)    # pp is Megatron's slowest axis
    if stage >= len(chunks) or not isinstance(chunks[stage], list) or \
            len(chunks[stage]) != n:
        return None
    out: List[Dict[int, int]] = []
    for c in chunks[stage]:
        if c and not (len(c) == 2 and all(_is_index(x) for x in c)
                      and c[0] <= c[1]):
            return None
        out.append({c[0] + i: i for i in range(c[1] - c[0] + 1)}
                   if c else {})
    return out


def _expert_of(name: str) -> Optional[Tuple[int, str, str, str, int]]:
    """(layer, moe module, projection, weight or bias, expert) of a routed
    expert's layout name, else None."""
    m = _LAYER.match(name)
    x = m and _EXPERT.match(m.group(2))
    if not x:
        return None
    return int(m.group(1)), x.group(1), x.group(3), x.group(4), \
        int(x.group(2))


def _expert_piece(e: _Entry, shape: List[int], ctx: _Ctx, side: str,
                  find: Callable[[_Entry, List[int]], Any]) -> Optional[Any]:
    """A piece of a routed expert's w13 (gate or up, w13=up_gate with FP8)
    or its scales: its rows of the expert's buffer, which `find` maps as
    it maps a whole expert (under EPLB, the slot expert_slots gives).
    None if the piece is of no expert."""
    into, of = e.extra["fused_into"], e.extra.get("scales_of")
    expert = into[:-len(".scale")] if of is not None else into
    if _expert_of(expert) is None:
        return None
    extra = {k: v for k, v in e.extra.items()
             if not k.startswith("fused_") and k != "copy_of"}
    if of is not None:
        extra["scales_of"] = expert
    rows = [ctx.fused_rows[into]] + list(shape[1:])
    whole = _Entry(into, rows, e.src, e.dst, extra, e.dtype)
    off = _offset(e, side)
    return find(whole, rows)[off:off + shape[0]]


def _offset(e: _Entry, side: str) -> int:
    off = e.extra.get("fused_offset")
    if not isinstance(off, Mapping) or not isinstance(off.get(side), int):
        raise ReshardError(f"{e.name}: a piece of {e.extra['fused_into']} "
                           f"without fused_offset.{side}")
    return off[side]


def _slot(e: _Entry, side: str, rank: int) -> Tuple[int, int]:
    """(slot, slots) of a routed expert in the rank's stacked expert
    tensors under EPLB (its `expert_slots` and `expert_stack`)."""
    slots, stack = e.extra["expert_slots"], e.extra.get("expert_stack")
    try:
        found = [j for r, j in slots[side] if r == rank]
    except (TypeError, ValueError, KeyError):
        found = None
    if not isinstance(stack, int) or not found or len(found) > 1 or \
            not isinstance(found[0], int) or not 0 <= found[0] < stack:
        raise ReshardError(f"{e.name}: expert_slots.{side} must give rank "
                           f"{rank} one slot in [0, expert_stack), not "
                           f"{slots!r} (expert_stack {stack!r})")
    return found[0], stack


def _buffer_rows(e: _Entry, side: str) -> Optional[int]:
    rows = e.extra.get("fused_buffer_rows")
    if rows is None:
        return None
    if not isinstance(rows, Mapping) or not isinstance(rows.get(side), int) \
            or rows[side] < _offset(e, side) + e.shape[0]:
        raise ReshardError(f"{e.name}: fused_buffer_rows.{side} must be an "
                           f"integer that holds the piece (rows "
                           f"{_offset(e, side)} + {e.shape[0]})")
    return rows[side]


_VOCAB_PARAMS = ("word_embeddings.weight", "output_layer.weight",
                 "embed_tokens.weight", "embedding.weight", "lm_head.weight")


def _check(pname: str, t: Any, want: Sequence[int], what: str) -> None:
    got = _shape(t)
    if got != tuple(want):
        hint = ""
        if pname.endswith(_VOCAB_PARAMS) and got[1:] == tuple(want[1:]):
            hint = (" (other vocab rows: a padded vocab the layout does not "
                    "say? Megatron's vocab_pad= or padded_vocab=)")
        elif pname.endswith("_scale_inv") and str(
                getattr(t, "dtype", "")) == "torch.int32":
            hint = (" (DeepGEMM's packed UE8M0 scales, which vLLM makes on "
                    "Blackwell after loading; reshard writes the "
                    "checkpoint's fp32 layout: refit such a model through "
                    "vLLM's load_weights, docs/Python.md, fp8=)")
        elif pname.endswith("w13_weight") and len(got) == len(want) + 1:
            hint = (" (FlashInfer TRT-LLM's block layout, which vLLM's "
                    "Blackwell experts make after loading; reshard does not "
                    "model it: docs/Python.md, w13=up_gate)")
        raise _Miss(f"parameter {pname!r} has shape {list(got)}, but "
                    f"{what} is {list(want)}{hint}")


def _map(layout: LayoutLike, params: ParamsLike, rank: int, side: str,
         who: str, normalize: Callable[[str], str], buffers: bool,
         resolve: Callable, layer_offset: Optional[int],
         unused: Optional[List[str]], chunked: bool) -> Dict[str, Any]:
    if side not in ("src", "dst"):
        raise ReshardError(f"{who}: side must be 'src' or 'dst', not "
                           f"{side!r}")
    if not _is_index(rank):
        raise ReshardError(f"{who}: rank {rank!r} is not a global rank")
    rank = int(rank)
    layout = _read_path(layout)     # read once, for the entries and chunks
    if unused is not None and not isinstance(unused, list):
        raise ReshardError(f"{who}: unused= takes a list to append to, not "
                           f"{unused!r}")
    chunks = _chunks(params) if chunked else None
    models = chunks or [params]
    tables = [_Table(*_pairs(c, buffers), normalize) for c in models]
    numbered = None
    if chunked:
        if chunks is None and isinstance(layer_offset, (list, tuple)) and \
                len(layer_offset) == 1 and _is_index(layer_offset[0]):
            layer_offset = layer_offset[0]      # one model, one offset
        _check_offsets(layer_offset, chunks)
        if isinstance(layer_offset, (list, tuple)):
            layer_offset = [int(o) for o in layer_offset]
        elif layer_offset is not None:
            layer_offset = int(layer_offset)
        numbered = _numbering(models, tables, layer_offset, normalize)
        if numbered is None and chunks is not None and layer_offset is None:
            numbered = _scenario_chunks(layout, rank, side, len(chunks))
    held = []
    for e in _entries(layout):
        if getattr(e, side) is None:
            continue            # scales have no source
        # The shape of the rank's buffer (its dims in the side's dim_order).
        shape = getattr(e, side).stored_shape(e.shape, rank)
        if shape is not None:
            held.append((e, shape))
    ctx = _Ctx(held, side, None if numbered else layer_offset, tables,
               chunked, chunks is not None, numbered)
    table = tables[0]
    out: Dict[str, Any] = {}
    problems: List[str] = []
    for e, shape in held:
        if not math.prod(shape):
            continue            # an empty shard: the plan needs no tensor
        try:
            out[e.name] = resolve(e, shape, ctx, table, rank)
        except _Miss as m:
            problems.append(f"{e.name}: {m}")
    if problems:
        more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
        raise ReshardError(f"{who} (rank {rank}): " + "; ".join(problems[:8])
                           + more)
    if unused is not None:
        for v, t in enumerate(tables):
            prefix = f"model[{v}]: " if chunks else ""
            unused.extend(prefix + n for n in t.unused())
    return out


def _check_prefix(prefix: Any, who: str) -> None:
    if not isinstance(prefix, str):
        raise ReshardError(f"{who}: prefix={prefix!r}: give a string such "
                           f"as 'language_model.'")


def _check_offsets(layer_offset: Any, chunks: Optional[List[Any]]) -> None:
    if isinstance(layer_offset, (list, tuple)):
        if chunks is None or len(layer_offset) != len(chunks):
            raise ReshardError(
                f"layer_offset={list(layer_offset)}: one offset per model "
                f"chunk, with the list of chunks "
                f"({'one model given' if chunks is None else len(chunks)})")
        if not all(_is_index(o) for o in layer_offset):
            raise ReshardError(f"layer_offset={list(layer_offset)}: give "
                               f"integers >= 0")
    elif layer_offset is not None and not _is_index(layer_offset):
        raise ReshardError(f"layer_offset={layer_offset!r}: give an "
                           f"integer >= 0")


def _is_index(v: Any) -> bool:
    return _is_int(v) and v >= 0


def _chunks(params: ParamsLike) -> Optional[List[Any]]:
    """Megatron's list of model chunks (virtual pipeline stages): a list or
    tuple of modules or of name -> tensor dicts; None for one model."""
    if not isinstance(params, (list, tuple)) or not params:
        return None
    kinds = [hasattr(c, "named_parameters") or isinstance(c, Mapping)
             for c in params]
    if not any(kinds):
        return None             # (name, tensor) pairs
    if not all(kinds):
        raise ReshardError("params: a list mixing model chunks (modules or "
                           "dicts) with other items")
    return list(params)


# Megatron parameters kept in fp32 whatever the model's dtype.
_FP32_IN_MEGATRON = ("mlp.router.bias", "mlp.router.weight",
                     "core_attention.softmax_offset")
_NARROW = {"bf16": "bfloat16", "fp16": "half"}     # torch.Tensor methods


def _merged(shape: Sequence[int], e: _Entry) -> List[int]:
    """The parameter's shape for a buffer of `shape`: with merge_dims [a,
    a + 1] (gpt-oss's gate_up, [2, f(, h)] in the layout and 2-D in both
    frameworks) those dims are one."""
    md = e.extra.get("merge_dims")
    if md is None:
        return list(shape)
    if not (isinstance(md, list) and len(md) == 2 and
            all(_is_index(a) for a in md) and md[1] == md[0] + 1 and
            md[1] < len(shape)):
        raise _Miss(f"merge_dims {md!r}: give two adjacent dims [a, a + 1] "
                    f"of the {len(shape)}-D buffer")
    a = md[0]
    return list(shape[:a]) + [shape[a] * shape[a + 1]] + list(shape[a + 2:])


def _as_buffer(t: Any, shape: Sequence[int], e: _Entry) -> Any:
    """The parameter viewed as the layout's buffer (a view: no copy)."""
    return t.view(*shape) if "merge_dims" in e.extra else t


def _tried(names: Sequence[str]) -> str:
    return " or ".join(repr(n) for n in names)


# --- Megatron-Core ----------------------------------------------------------

def _megatron_names(name: str, ctx: _Ctx
                    ) -> Tuple[Sequence[str], str, _Table]:
    """Candidate Megatron names of a (non-expert, non-piece) layout tensor,
    where they come from (for messages) and the table of the model chunk
    that holds them: the first for the embedding, the last for the final
    norm and the output layer."""
    if name in _MEGATRON_TOP:
        # The embedding is in the first chunk, the output layer in the
        # last; the final norm too, except with MTP layers (then in the
        # chunk of the last decoder layer). An MTP stage's embedding copy
        # comes after the first.
        names = _MEGATRON_TOP[name]
        order = ctx.tables if name in ("model.embed_tokens.weight",
                                       "model.embedding.weight") else \
            ctx.tables[::-1]
        table = next((t for t in order if t.get(names) is not None),
                     order[0])
        return names, "", table
    m = _LAYER.match(name)
    rest = m and _MEGATRON_LAYER.get(m.group(2))
    if not rest:
        raise _Miss("no Megatron-Core parameter is known for it")
    table, local, where = ctx.layer(int(m.group(1)))
    return [f"decoder.layers.{local}.{r}" for r in rest], where, table


def _megatron_resolve(side: str):
    def resolve(e: _Entry, shape: List[int], ctx: _Ctx, table: _Table,
                rank: int) -> Any:
        return _megatron_view(e, shape, ctx, rank, side)
    return resolve


def _piece_view(e: _Entry, shape: List[int], ctx: _Ctx, table: _Table,
                rank: int, side: str, names: List[str], tried: str) -> Any:
    """A piece (KV-replicated q/k/v, padded vocab): its rows of the rank's
    fused buffer, at fused_offset."""
    into = e.extra["fused_into"]
    got = table.get(names)
    if got is None:
        raise _Miss(f"no parameter {tried} (the fused buffer this piece is "
                    f"rows of)")
    pname, t = got
    off = _offset(e, side)
    _check(pname, t, [ctx.fused_rows[into]] + shape[1:],
           f"the fused buffer rank {rank} holds of {into}")
    return _plain(t)[off:off + shape[0]]


def _megatron_view(e: _Entry, shape: List[int], ctx: _Ctx, rank: int,
                   side: str) -> Any:
    what = f"rank {rank}'s shard"
    if "copy_of" in e.extra:    # an EPLB copy: the expert's own parameter
        e = _Entry(e.extra["copy_of"], e.shape, e.src, e.dst,
                   {k: v for k, v in e.extra.items() if k != "copy_of"},
                   e.dtype)
    into = e.extra.get("fused_into")
    if into is not None:                    # a piece of a fused buffer
        got = _expert_piece(e, shape, ctx, side, lambda whole, rows:
                            _megatron_view(whole, rows, ctx, rank, side))
        if got is not None:
            return got
        names, where, table = _megatron_names(into, ctx)
        return _piece_view(e, shape, ctx, table, rank, side, names,
                           f"{_tried(names)}{where}")
    m = _LAYER.match(e.name)
    x = m and _EXPERT.match(m.group(2))
    if x:
        layer, moe, ex = int(m.group(1)), x.group(1), int(x.group(2))
        j, n = ctx.expert(layer, moe, ex)
        fc = 1 if x.group(3) in _FC1 else 2
        kind = x.group(4)                   # weight or bias
        table, local, _ = ctx.layer(layer)
        base = f"decoder.layers.{local}.mlp.experts"
        # TEGroupedMLP, then SequentialMLP (moe/experts.py).
        names = [f"{base}.linear_fc{fc}.{kind}{j}",
                 f"{base}.local_experts.{j}.linear_fc{fc}.{kind}"]
        got = table.get(names)
        if got is None:
            hint = ""
            if f"{base}.weight1" in table.by_name:
                hint = (" (this model has the legacy GroupedMLP, whose "
                        "weight1/weight2 hold all local experts transposed, "
                        "not addressable per expert: use TEGroupedMLP or "
                        "SequentialMLP)")
            raise _Miss(f"no parameter {_tried(names)} (expert {ex} is local "
                        f"expert {j} of the {n} on rank {rank}){hint}")
        pname, t = got
        _check(pname, t, _merged(shape, e), what)
        return _as_buffer(_plain(t), shape, e)
    if m and m.group(2) == "self_attn.fused_qkv_a_proj.weight":
        return _mla_a(e, shape, ctx, rank, int(m.group(1)),
                      getattr(e, side))
    if m and m.group(2) in _GDN_IN_PROJ:
        return _gdn_in_proj(e.name, shape, ctx, rank, int(m.group(1)),
                            m.group(2) == _GDN_IN_PROJ[1])
    names, where, table = _megatron_names(e.name, ctx)
    got = table.get(names)
    if got is None:
        hint = ""
        if names[0].endswith("router.expert_bias"):
            hint = (" (Megatron keeps it as a buffer: pass the model itself, "
                    "or its named_buffers() with its named_parameters())")
        raise _Miss(f"no parameter {_tried(names)}{where}{hint}")
    pname, t = got
    _check(pname, t, shape, what)
    if pname.endswith(_FP32_IN_MEGATRON) and e.dtype in ("bf16", "fp16") \
            and str(getattr(t, "dtype", "")) == "torch.float32":
        # Megatron keeps these in fp32 (the router's bias, the sinks),
        # vLLM in the model's dtype: a source sends a rounded copy.
        if side == "src":
            return getattr(_plain(t), _NARROW[e.dtype])()
        if e.dtype != "bf16":   # Plan.run widens bf16 into fp32 only
            raise _Miss(f"{pname!r} is fp32 and the layout moves "
                        f"{e.dtype}: Megatron cannot receive it in place")
    if pname.endswith("router.expert_bias") and str(
            getattr(t, "dtype", "")) in ("torch.bfloat16", "torch.float16"):
        # Float16Module casts it with the model; the router's first forward
        # (or a checkpoint load) turns it back to fp32. A source may be an
        # fp32 copy; a destination must be the buffer itself.
        if side == "src":
            return _plain(t).float()
        raise _Miss(f"{pname!r} is {str(t.dtype)[6:]} (Float16Module cast "
                    f"it): call the router's _maintain_float32_expert_bias()"
                    f" first, as its forward does")
    if pname.endswith("self_attention.out_norm.weight"):
        # Megatron runs Qwen3-Next with zero-centered norms (its weight is
        # the checkpoint's minus 1, Megatron-Bridge's RMSNorm2ZeroCentered
        # mapping); the checkpoint's and vLLM's gated norm is plain.
        if side == "src":
            return (_plain(t).float() + 1).to(t.dtype)
        raise _Miss(f"{pname!r} holds the checkpoint's weight minus 1 "
                    f"(zero-centered): Megatron cannot receive it in place")
    return _plain(t)


def _gdn_in_proj(name, shape, ctx, rank, layer, ba):
    """in_proj_qkvz and in_proj_ba: the first and the last rows of the
    rank's GatedDeltaNet in_proj ([q; k; v; z; b; a] of its heads)."""
    table, local, where = ctx.layer(layer)
    pname = f"decoder.layers.{local}.self_attention.in_proj.weight"
    got = table.get([pname])
    if got is None:
        raise _Miss(f"no parameter {pname!r}{where}")
    prefix = name[:-len(_GDN_IN_PROJ[ba])]
    both = [ctx.shapes.get(prefix + n) for n in _GDN_IN_PROJ]
    if None in both:
        raise _Miss(f"{pname!r} holds both {_tried(_GDN_IN_PROJ)} of "
                    f"layer {layer}: the layout gives rank {rank} one")
    _check(pname, got[1], [both[0][0] + both[1][0]] + shape[1:],
           f"rank {rank}'s shards of in_proj_qkvz and in_proj_ba together")
    start = both[0][0] if ba else 0
    return _plain(got[1])[start:start + shape[0]]


def _mla_a(e, shape, ctx, rank, layer, sharding):
    """fused_qkv_a_proj = [linear_q_down_proj; linear_kv_down_proj], two
    replicated Megatron parameters: a view where they are adjacent in one
    storage, else a copy (a source is only read)."""
    table, local, _ = ctx.layer(layer)
    names = [f"decoder.layers.{local}.{n}" for n in _MLA_A]
    got = [table.get([n]) for n in names]
    missing = [n for n, g in zip(names, got) if g is None]
    if missing:
        raise _Miss(f"no parameter {_tried(missing)}")
    (qn, q), (kn, kv) = got
    blocks = sharding.blocks.get(0) or [_shape(q)[0], shape[0] - _shape(q)[0]]
    _check(qn, q, [blocks[0]] + shape[1:], f"block 0 of rank {rank}'s shard")
    _check(kn, kv, [blocks[1]] + shape[1:], f"block 1 of rank {rank}'s shard")
    q, kv = _plain(q), _plain(kv)
    try:
        adjacent = (q.is_contiguous() and kv.is_contiguous()
                    and q.dtype == kv.dtype and q.device == kv.device
                    and q.untyped_storage().data_ptr()
                    == kv.untyped_storage().data_ptr()
                    and kv.data_ptr() == q.data_ptr()
                    + q.numel() * q.element_size())
    except AttributeError:              # not torch tensors
        adjacent = False
    if adjacent:
        stride = [math.prod(shape[i + 1:]) for i in range(len(shape))]
        return q.as_strided(shape, stride, q.storage_offset())
    import torch
    return torch.cat([q, kv], 0)


def _megatron_normalize(prefix: str) -> Callable[[str], str]:
    def norm(name: str) -> str:
        while name.startswith("module."):   # DDP, Float16Module
            name = name[len("module."):]
        if prefix and name.startswith(prefix):
            name = name[len(prefix):]
        return name
    return norm


def megatron_tensors(layout: LayoutLike, params: ParamsLike, rank: int, *,
                     side: str = "src",
                     layer_offset: Union[int, Sequence[int], None] = None,
                     prefix: str = "",
                     unused: Optional[List[str]] = None) -> Dict[str, Any]:
    """{layout tensor name: this rank's shard} from a Megatron-Core GPTModel
    pipeline stage's parameters, for every layout tensor `rank` holds a
    non-empty shard of on `side` ("src": Megatron is the trainer).

    layout: a reshard.Layout, its JSON dict or a .json path. params:
    model.named_parameters(), a dict name -> tensor, or the model (then
    its buffers too: the router's expert_bias is one); with virtual
    pipeline stages (vpp=), Megatron's list of model chunks (modules or
    dicts). rank: the global
    rank in the plan's communicator. Names may carry DDP's and
    Float16Module's "module." prefixes; `prefix` strips one more (e.g.
    "language_model."). Layers are numbered from 0 in each model chunk;
    layer_offset, the global index of each chunk's layer 0 (an int for
    one model, a list with chunks, going up), says where they are; else a
    module's layers say it (Megatron's layer_number); else chunk v holds
    the rank's v-th run of the layers the layout gives it. Each value is
    a view sharing the parameter's storage (one expert's parameter, or a
    piece's rows of linear_qkv or of a padded vocab's parameter), except
    MLA's fused_qkv_a_proj, two Megatron parameters: a view if they are
    adjacent in memory, else a copy; and a router's expert_bias still in
    bf16 (a model Float16Module cast that has not run forward or loaded a
    checkpoint since): as a source an fp32 copy, as Megatron's router
    would make it, as a destination an error. Raises ReshardError naming every
    layout tensor without a parameter or with a parameter of another shape
    than the shard;
    parameters no layout tensor uses are appended to `unused` if given
    ("model[v]: name" for chunk v of a list).
    """
    _check_zero_centered(layout, params)
    _check_prefix(prefix, "megatron_tensors")
    return _map(layout, params, rank, side, "megatron_tensors",
                _megatron_normalize(prefix), True, _megatron_resolve(side),
                layer_offset, unused, True)


def _check_zero_centered(layout: LayoutLike, params: ParamsLike) -> None:
    """Qwen3-Next's norms store the checkpoint's (1 + w) values only when
    Megatron runs them zero-centered (layernorm_zero_centered_gamma); a
    model (or its chunks) that says otherwise is refused, not mapped."""
    models = params if isinstance(params, (list, tuple)) else [params]
    configs = [getattr(c, "config", None) for c in models]
    off = [c for c in configs
           if getattr(c, "layernorm_zero_centered_gamma", None) is False]
    if off and any(e.name.endswith(".linear_attn.norm.weight")
                   for e in _entries(layout)):
        raise ReshardError(
            "megatron_tensors: this Megatron model has "
            "layernorm_zero_centered_gamma=False, but Qwen3-Next's norms "
            "are zero-centered in the checkpoint and in vLLM (Megatron-"
            "Bridge and Megatron-LM's --apply-layernorm-1p run it so): its "
            "norm weights would arrive off by 1")


# --- vLLM -------------------------------------------------------------------

def _vllm_resolve(side: str):
    def resolve(e: _Entry, shape: List[int], ctx: _Ctx, table: _Table,
                rank: int) -> Any:
        # A quantized weight's scales: vLLM's weight_scale_inv (block FP8)
        # or weight_scale (MXFP8) beside the weight.
        of = e.extra.get("scales_of")
        suffix = ""
        name = e.name
        if of is not None:
            suffix = "_scale_inv" if "block" in e.extra["quant"] else "_scale"
            name = of
        name = e.extra.get("copy_of", name)     # an EPLB copy's expert
        into = e.extra.get("fused_into")
        if into is not None:    # a piece of a fused buffer, or its scales
            got = _expert_piece(e, shape, ctx, side, lambda whole, rows:
                                resolve(whole, rows, ctx, table, rank))
            if got is not None:
                return got
            if of is not None:
                into = into[:-len(".scale")] + suffix
            return _piece_view(e, shape, ctx, table, rank, side, [into],
                               repr(into))
        m = _LAYER.match(name)
        x = m and _EXPERT.match(m.group(2))
        if x:                               # one expert of FusedMoE's stack
            layer, moe, ex = int(m.group(1)), x.group(1), int(x.group(2))
            j, n = ctx.expert(layer, moe, ex)
            if "expert_slots" in e.extra:   # EPLB: the physical slot
                j, n = _slot(e, side, rank)
            stack = ("w13_" if x.group(3) in _FC1 else "w2_") + \
                x.group(4) + suffix
            pname = f"model.layers.{layer}.{moe}.experts.{stack}"
            got = table.get([pname])
            if got is None:
                raise _Miss(f"no parameter {pname!r} (expert {ex} is local "
                            f"expert {j} of the {n} on rank {rank})")
            _check(pname, got[1], [n] + _merged(shape, e),
                   f"[local experts] + rank {rank}'s shard ({n} experts of "
                   f"layer {layer} on this rank)")
            return _as_buffer(_plain(got[1])[j], shape, e)
        pname = name + suffix
        got = table.get([pname])
        if got is None:
            raise _Miss(f"no parameter {pname!r}")
        _check(pname, got[1], shape, f"rank {rank}'s shard")
        return _plain(got[1])
    return resolve


def vllm_tensors(layout: LayoutLike, params: ParamsLike, rank: int, *,
                 side: str = "dst", prefix: str = "",
                 unused: Optional[List[str]] = None) -> Dict[str, Any]:
    """{layout tensor name: this rank's shard} from a vLLM model's
    parameters, for every layout tensor `rank` holds a non-empty shard of
    on `side` ("dst": vLLM is the inference engine).

    layout: a reshard.Layout, its JSON dict or a .json path. params:
    model.named_parameters() of the engine's model (LlamaForCausalLM & co.),
    a dict name -> tensor, or the model. rank: the global rank in the
    plan's communicator. `prefix` is stripped from names that start with
    it. Layout names are vLLM's parameter names, except routed experts
    (expert E of a layer is w13_weight[j] / w2_weight[j] of its FusedMoE,
    j its index among the experts this rank holds) and pieces (rows of
    qkv_proj, embed_tokens or lm_head at the piece's fused_offset). Every
    value is a view sharing the parameter's storage. Raises ReshardError
    naming every layout tensor without a parameter or with a parameter of
    another shape, and, given the model, one whose FusedMoE kernels store
    w13 otherwise than the layout (FlashInfer TRT-LLM's blocks, or
    FlashInfer CUTLASS's [up; gate] without w13=up_gate); parameters no
    layout tensor uses (vLLM's scales, extra buffers) are appended to
    `unused` if given.
    """
    _check_prefix(prefix, "vllm_tensors")
    layout = _read_path(layout)     # read once, for the check and the map
    check_moe_kernels(layout, params)
    def norm(name: str) -> str:
        return name[len(prefix):] if prefix and name.startswith(prefix) \
            else name
    return _map(layout, params, rank, side, "vllm_tensors", norm, False,
                _vllm_resolve(side), None, unused, False)
