"""vLLM inference layouts: engines, TP, expert parallel, KV-head replicas.

The conventions and the vLLM code they mirror are in docs/Python.md
("Inference layout: vLLM").
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional, Tuple

from .errors import ReshardError
from .mesh import DeviceMesh, _is_bool
from .megatron import (PresetSide, _is_int, check_sizes, check_stages,
                       check_world, parse_spec, strip_framework, tp_dims)


@dataclass(frozen=True)
class Infer:
    tp: int = 1
    dp: int = 1              # --data-parallel-size of each engine
    ep: bool = False         # --enable-expert-parallel
    spmoe: Optional[bool] = None  # None: vLLM's rule (ep, tp > 1, dp > 1)
    # Routed experts' w13 per rank: "gate_up" (FusedMoE's [gate_r; up_r])
    # or "up_gate" (FlashInfer's kernels: swap_w13_to_w31).
    w13: str = "gate_up"
    # Linear weights delivered as FP8 (docs/Layout.md "Quantized
    # destinations"): "block" ([128, 128] fp32 scales, vLLM's block-FP8
    # weight_scale_inv), "ue8m0" (the same with power-of-two scales, as
    # DeepSeek-V3.1's checkpoints and vLLM's DeepGEMM E8M0 path on Hopper
    # hold them) or "mx" (MXFP8); None: as the source.
    fp8: Optional[str] = None
    engines: int = 1     # independent engines (copies of dp*pcp*tp ranks)
    # --expert-placement-strategy: which EP rank holds which routed expert.
    placement: str = "linear"
    # --prefill-context-parallel-size: pcp ranks of tp each per DP rank,
    # holding the same weights (vLLM's rank order: DP x PP x PCP x TP).
    # (Fields after the older ones keep positional construction as it was.)
    pcp: int = 1
    # --pipeline-parallel-size: pp stages of each engine (DP x PP x PCP x
    # TP); stages: layers of each (VLLM_PP_LAYER_PARTITION), None for
    # get_pp_indices' split.
    pp: int = 1
    stages: Optional[Tuple[int, ...]] = None
    # EPLB (--enable-eplb, eplb_config.num_redundant_experts): routed
    # experts have redundant physical copies, num_experts + redundant
    # physical experts placed linearly over the EP ranks. Physical expert
    # p holds logical expert expert_map[k][p] in the k-th MoE layer (one
    # row: every layer), EplbState's physical_to_logical_map; without
    # it, vLLM's initial map (build_initial_global_physical_to_logical_map:
    # p, then p - num_experts for the redundant ones).
    redundant: int = 0
    expert_map: Optional[Tuple[Tuple[int, ...], ...]] = None

    def __post_init__(self) -> None:
        check_sizes(self, ("tp", "dp", "pcp", "pp", "engines"), "vLLM")
        check_stages(self, "vLLM")
        if not _is_int(self.redundant) or self.redundant < 0:
            raise ReshardError(f"vLLM: redundant={self.redundant!r} must be "
                               f"an integer >= 0")
        object.__setattr__(self, "redundant", int(self.redundant))
        if self.expert_map is not None:
            object.__setattr__(self, "expert_map",
                               _expert_map_rows(self.expert_map))
        if self.stages is not None and len(self.stages) != self.pp:
            raise ReshardError(f"vLLM: stages= lists {len(self.stages)} "
                               f"stages for pp={self.pp}")
        if not _is_flag(self.ep):
            raise ReshardError(f"vLLM: ep={self.ep!r}: give True or False "
                               f"(--enable-expert-parallel)")
        object.__setattr__(self, "ep", bool(self.ep))
        if self.spmoe is not None and not _is_flag(self.spmoe):
            raise ReshardError(f"vLLM: spmoe={self.spmoe!r}: give None "
                               f"(vLLM's rule), True or False")
        if self.spmoe is not None:
            object.__setattr__(self, "spmoe", bool(self.spmoe))
        check_world(self.world, "vLLM")
        if self.w13 not in W13_ORDERS:
            raise ReshardError(f"vLLM: w13={self.w13!r}: give "
                               f"{' or '.join(W13_ORDERS)}")
        if self.placement not in PLACEMENTS:
            raise ReshardError(f"vLLM: placement={self.placement!r}: give "
                               f"{' or '.join(PLACEMENTS)}")
        if self.fp8 not in (None,) + FP8_FORMATS:
            raise ReshardError(f"vLLM: fp8={self.fp8!r}: give "
                               f"{' or '.join(FP8_FORMATS)}")
        if self.eplb and not self.ep:
            raise ReshardError("vLLM: redundant= / expert_map (EPLB) need "
                               "expert parallel: give ep=1")
        if self.eplb and self.placement != "linear":
            raise ReshardError("vLLM: with EPLB (redundant= / expert_map) "
                               "vLLM falls back to linear expert placement: "
                               "drop placement=round_robin")

    @property
    def eplb(self):
        return self.redundant > 0 or self.expert_map is not None

    def fp8_quant(self, rank):
        """The dst `quant` of a linear weight of `rank` dims, or None."""
        if self.fp8 == "block":
            return {"block": [128] * rank}
        if self.fp8 == "ue8m0":
            return {"block": [128] * rank, "scale_fmt": "ue8m0"}
        if self.fp8 == "mx":
            return {"mx": 32}
        return None

    @property
    def world(self):
        return self.engines * self.engine_size * self.pp

    @property
    def engine_size(self):
        """Ranks of one engine's pipeline stage: the TP groups of its DP
        and PCP ranks; vLLM's expert parallel group, or its MoE TP group
        without EP (flatten_tp_across_dp_and_pcp), of that stage."""
        return self.dp * self.pcp * self.tp

    @property
    def replicas(self):
        """Copies of a tensor-parallel group: every PCP rank of every DP
        rank of every engine."""
        return self.engines * self.dp * self.pcp

    @property
    def seq_parallel_moe(self):
        if self.spmoe is None:
            return self.ep and self.tp > 1 and self.dp > 1
        return self.spmoe


INFER_KEYS = ("tp", "dp", "pcp", "pp", "stages", "engines", "ep", "spmoe",
              "w13", "fp8", "placement", "redundant")
W13_ORDERS = ("gate_up", "up_gate")
PLACEMENTS = ("linear", "round_robin")
FP8_FORMATS = ("block", "ue8m0", "mx")


def _is_flag(v) -> bool:
    """True or False: a bool, 0 or 1 (numpy's too), not 1.0."""
    return _is_bool(v) or _is_int(v) and v in (0, 1)


def _plain_list(x):
    """Lists of ints from lists, tuples, numpy arrays or torch tensors."""
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, (str, bytes, Mapping, set, frozenset)):
        raise TypeError
    return [_plain_list(v) for v in x] if not _is_int(x) else int(x)


def _is_row(r):
    return isinstance(r, list) and r and all(isinstance(x, int) for x in r)


def _expert_map_rows(rows):
    """expert_map as a tuple of rows of ints (one row from a flat list), or,
    for per-stage maps (pp > 1), a tuple of such row tuples."""
    why = ("vLLM: expert_map must be EplbState's physical_to_logical_map: "
           "a row of logical expert indices per physical expert, rows "
           "for the MoE layers, or one such map per pipeline stage")
    try:
        out = _plain_list(rows)
    except (TypeError, RecursionError):
        raise ReshardError(why) from None
    if _is_row(out):
        out = [out]                                 # one row
    if isinstance(out, list) and out and all(_is_row(r) for r in out):
        return tuple(tuple(r) for r in out)
    if isinstance(out, list) and out and all(
            isinstance(st, list) and st and all(_is_row(r) for r in st)
            for st in out):
        return tuple(tuple(tuple(r) for r in st) for st in out)
    raise ReshardError(why)


def parse_infer(text: str, what: str = "infer") -> Infer:
    """'[vllm:]tp=8[,dp=4][,pcp=2][,pp=2[,stages=a:b]][,engines=2]
    [,ep=0|1|tp*dp*pcp][,spmoe=auto|0|1]
    [,w13=gate_up|up_gate][,fp8=block|mx][,placement=linear|round_robin]
    [,redundant=N]'
    -> Infer: `engines`
    independent engines, each of vLLM's --data-parallel-size dp,
    --pipeline-parallel-size pp, --prefill-context-parallel-size pcp and
    --tensor-parallel-size tp."""
    text = strip_framework(text, "vllm", what)
    d = parse_spec(text, INFER_KEYS, what, words=("w13", "fp8", "placement"))
    # Sizes default to 1.
    tp, dp, pcp = d.get("tp", 1), d.get("dp", 1), d.get("pcp", 1)
    ep = d.get("ep", 0)
    if ep not in (0, 1) and ep != tp * dp * pcp:
        raise ReshardError(f"{what}: ep={ep}: vLLM's expert parallel group "
                           f"is an engine's tp*dp*pcp = {tp * dp * pcp} "
                           f"ranks; give ep=1 (enable) or ep=0")
    spmoe = d.get("spmoe")
    if spmoe not in (None, 0, 1):
        raise ReshardError(f"{what}: spmoe must be auto, 0 or 1")
    w13 = d.get("w13", "gate_up")
    if w13 not in W13_ORDERS:
        raise ReshardError(f"{what}: w13={w13!r}: give "
                           f"{' or '.join(W13_ORDERS)}")
    fp8 = d.get("fp8")
    if fp8 is not None and fp8 not in FP8_FORMATS:
        raise ReshardError(f"{what}: fp8={fp8!r}: give "
                           f"{' or '.join(FP8_FORMATS)}")
    placement = d.get("placement", "linear")
    if placement not in PLACEMENTS:
        raise ReshardError(f"{what}: placement={placement!r}: give "
                           f"{' or '.join(PLACEMENTS)}")
    try:        # Infer's own checks (stages=), named as the spec
        return Infer(tp=tp, dp=dp, pcp=pcp, pp=d.get("pp", 1),
                     stages=d.get("stages"), engines=d.get("engines", 1),
                     ep=bool(ep), spmoe=None if spmoe is None else bool(spmoe),
                     w13=w13, fp8=fp8, placement=placement,
                     redundant=d.get("redundant", 0))
    except ReshardError as e:
        raise ReshardError(str(e).replace("vLLM:", f"{what}:", 1)) from None


def kv_split(m, i):
    """Whether vLLM replicates KV heads (tp > num_kv_heads)."""
    return not m.mla and i.tp > m.kv_heads


def qkv_order(m):
    """qkv_proj's storage order of the logical [q; gate; k; v] rows with
    an attention output gate: the q block is the checkpoint's q_proj,
    [q_h; gate_h] per head (qwen3_next.py splits it so); None without a
    gate ([q; k; v] as it is, blocks [q, kv, kv])."""
    if not m.attn_output_gate:
        return None
    hd, q = m.head_dim, m.heads * m.head_dim
    runs = []
    for h in range(m.heads):
        runs += [[h * hd, hd], [q + h * hd, hd]]
    return runs + [[2 * q, 2 * m.kv_heads * hd]]


def qkv_rank_rows(m, i, t):
    """The logical qkv rows TP rank t holds, in its local order:
    [q_t; k; v] of its heads, KV heads replicated when tp > num_kv_heads
    (QKVParallelLinear)."""
    hd, nkv = m.head_dim, m.kv_heads
    qg = m.heads * hd * (1 + m.attn_output_gate)
    stored = [r for a, n in (qkv_order(m) or [[0, qg]]) for r in
              range(a, a + n)][:qg]
    per = qg // i.tp
    if i.tp > nkv:
        heads = [t // (i.tp // nkv)]
    else:
        heads = range(t * nkv // i.tp, (t + 1) * nkv // i.tp)
    kv = [qg + h * hd + j for h in heads for j in range(hd)]
    return stored[t * per:(t + 1) * per] + kv + [r + nkv * hd for r in kv]


def validate(m, i):
    """The divisibility rules vLLM enforces; a list of errors."""
    err = []
    if m.heads % i.tp:
        err.append(f"vLLM: num_heads {m.heads} % tp {i.tp}")
    if not m.mla and m.kv_heads % i.tp and i.tp % m.kv_heads:
        err.append(f"vLLM: tp {i.tp} and num_kv_heads {m.kv_heads}: neither "
                   f"divides the other")
    if (m.dense_layers or not m.experts) and m.intermediate % i.tp:
        err.append(f"vLLM: intermediate_size {m.intermediate} % tp {i.tp}")
    # Gated DeltaNet: each rank a contiguous run of whole key groups of
    # in_proj_qkvz (qwen3_next.py views it per key head).
    if m.linear_layers and (m.lin_k_heads % i.tp or m.lin_v_heads % i.tp):
        err.append(f"vLLM: linear_num_key_heads {m.lin_k_heads} and "
                   f"linear_num_value_heads {m.lin_v_heads} % tp {i.tp}")
    # VocabParallelEmbedding splits the vocab padded to a multiple of 64
    # over tp (divide() asserts it divides).
    if padded_vocab(m) % i.tp:
        err.append(f"vLLM: vocab {m.vocab}, padded to {padded_vocab(m)} (a "
                   f"multiple of 64: VocabParallelEmbedding), % tp {i.tp}")
    # gpt_oss.py divides the KV heads by tp (OAIAttention) and gives each
    # EP rank num_experts // ep_size experts in its own loader; its MoE
    # block takes no EPLB.
    if m.gpt_oss and i.tp > m.kv_heads:
        err.append(f"vLLM: gpt-oss's attention divides its num_kv_heads "
                   f"{m.kv_heads} by tp {i.tp} (gpt_oss.py has no KV-head "
                   f"replicas): tp must be at most {m.kv_heads}")
    if m.gpt_oss and i.ep and m.experts % i.engine_size:
        err.append(f"vLLM: gpt-oss's loader gives each EP rank "
                   f"num_experts // ep_size experts: {m.experts} experts "
                   f"% ep size {i.engine_size}")
    if m.gpt_oss and i.eplb:
        err.append("vLLM: gpt-oss has no EPLB (gpt_oss.py's MoE takes no "
                   "redundant experts): drop redundant= / expert_map")
    if m.gpt_oss and i.w13 == "up_gate":
        err.append("vLLM: w13=up_gate: gpt-oss's w13 interleaves gate and "
                   "up rows, it has no [up; gate] form")
    if i.placement == "round_robin" and not m.experts:
        err.append(f"vLLM: placement=round_robin: {m.name} has no routed "
                   f"experts")
    if i.eplb:
        err += _check_eplb(m, i)
    if m.experts:
        if not i.ep and m.moe_intermediate % i.engine_size:
            err.append(f"vLLM: moe_intermediate_size % tp*dp "
                       f"{i.engine_size} (no EP: FusedMoE's TP group is an "
                       f"engine's tp*dp ranks)")
        if i.ep and m.experts < i.engine_size:
            err.append(f"vLLM: {m.experts} experts < ep size "
                       f"{i.engine_size}")
        if i.placement == "round_robin" and not i.ep:
            err.append("vLLM: placement=round_robin places experts under "
                       "expert parallel only: give ep=1")
        if i.placement == "round_robin" and m.expert_groups <= 1:
            err.append(f"vLLM: placement=round_robin needs a model with "
                       f"expert groups (n_group > 1; this one has "
                       f"{m.expert_groups}): vLLM falls back to linear, "
                       f"give placement=linear")
        if (m.shared_experts and not shared_experts_replicated(m, i)
                and m.shared_size() % i.tp):
            err.append("vLLM: shared expert intermediate % tp")
    return err


def shared_experts_replicated(m, i):
    """Whether vLLM replicates the shared experts: under sequence-parallel
    MoE, for the models whose vLLM code does (Model.spmoe_replicates_
    shared)."""
    return bool(m.shared_experts and m.spmoe_replicates_shared()
                and i.seq_parallel_moe)


def per_stage_maps(i):
    """Whether expert_map holds one map per pipeline stage."""
    return i.expert_map is not None and isinstance(i.expert_map[0][0], tuple)


def _check_eplb(m, i):
    if not m.experts:
        return [f"vLLM: EPLB (redundant= / expert_map): {m.name} has no "
                f"routed experts"]
    if i.tp == 1 and i.dp == 1:
        return ["vLLM: EPLB needs tp or dp above 1 (vLLM refuses it "
                "otherwise)"]
    n_phys = m.experts + i.redundant
    if n_phys % i.engine_size:
        return [f"vLLM: EPLB: {m.experts} experts + {i.redundant} redundant "
                f"= {n_phys} physical experts % ep size {i.engine_size} "
                f"(vLLM's EPLB gives every EP rank as many)"]
    if i.expert_map is None:
        return []
    if per_stage_maps(i):
        # Rows are checked as the layers use them: a stage's map may have
        # rows past its MoE layers (DeepSeek's count the whole model's).
        if len(i.expert_map) != i.pp:
            return [f"vLLM: expert_map has {len(i.expert_map)} per-stage "
                    f"maps for pp={i.pp}"]
        return []
    moe_layers = sum(m.is_moe(g) for g in range(m.layers))
    if len(i.expert_map) not in (1, moe_layers):
        return [f"vLLM: expert_map has {len(i.expert_map)} rows: give one, "
                f"or one per MoE layer ({moe_layers}) of the whole model "
                f"(with pp > 1, or one map per stage)"]
    return [e for k, r in enumerate(i.expert_map)
            for e in [check_map_row(m, i, f"row {k}", r)] if e]


def check_map_row(m, i, where, row):
    """What is wrong with one expert_map row, or None."""
    n_phys = m.experts + i.redundant
    if len(row) != n_phys:
        hint = (f" (give redundant={len(row) - m.experts})"
                if len(row) > m.experts else "")
        return (f"vLLM: expert_map {where} has {len(row)} physical experts, "
                f"not {m.experts} + redundant {i.redundant} = "
                f"{n_phys}{hint}")
    bad = [x for x in row if not 0 <= x < m.experts]
    if bad:
        return (f"vLLM: expert_map {where}: logical expert {bad[0]} is not "
                f"in [0, {m.experts})")
    missing = sorted(set(range(m.experts)) - set(row))
    if missing:
        return (f"vLLM: expert_map {where}: logical expert {missing[0]} has "
                f"no physical copy")
    return None


VOCAB_PADDING = 64   # DEFAULT_VOCAB_PADDING_SIZE


def padded_vocab(m):
    """The vocab VocabParallelEmbedding and ParallelLMHead hold: padded to
    a multiple of 64 (pad_vocab_size), at every tp."""
    return -(-m.vocab // VOCAB_PADDING) * VOCAB_PADDING


def vocab_rows(m, i):
    """Rows of the embedding and lm_head on each TP rank: rank t holds the
    padded rows t*n to t*n + n - 1 (vocab_range_from_global_vocab_size)."""
    return padded_vocab(m) // i.tp


def pp_split(layers, i):
    """Layer count of each of vLLM's pp stages: `stages` if given
    (VLLM_PP_LAYER_PARTITION), else get_pp_indices (vllm/distributed/
    utils.py): layers // pp each, the remainder one more each on the
    stages before the last, from the second-to-last backwards."""
    if i.stages is not None:
        if sum(i.stages) != layers:
            raise ReshardError(f"vLLM: stages={':'.join(map(str, i.stages))} "
                               f"holds {sum(i.stages)} layers, not {layers}")
        return list(i.stages)
    base, rem = divmod(layers, i.pp)
    counts = [base] * i.pp
    for k in range(2, rem + 2):
        counts[-k] += 1
    return counts


def ep_rank_of(e, n_experts, ep_size, placement="linear"):
    """determine_expert_map: "linear" gives contiguous experts, the first
    n_experts % ep_size ranks one more; "round_robin" gives rank r experts
    r, r + ep_size, ..."""
    if placement == "round_robin":
        return e % ep_size
    base, rem = divmod(n_experts, ep_size)
    big = rem * (base + 1)
    return e // (base + 1) if e < big else rem + (e - big) // base


class VllmSide(PresetSide):
    """Places each parameter on the engines' meshes: engine e, DP rank d,
    pipeline stage s, PCP rank c, TP rank t is global rank
    first + (((e*dp + d)*pp + s)*pcp + c)*tp + t (vLLM's order, DP x PP x
    PCP x TP). A stage's meshes carry `_pp{s}` in their names when pp > 1."""

    def __init__(self, i, first_rank, layers):
        super().__init__(i.pp, [s for s, n in enumerate(pp_split(layers, i))
                                for _ in range(n)])
        self.i = i
        self.first_rank = first_rank
        self._copies = {}       # layer -> {expert: copies} under EPLB

    def ranks(self):
        return range(self.first_rank, self.first_rank + self.i.world)

    def rank(self, e, d, s, c, t):
        i = self.i
        return self.first_rank + (((e * i.dp + d) * i.pp + s) * i.pcp
                                  + c) * i.tp + t

    def replica(self, rep, s, t):
        """TP rank t of replica rep = (e*dp + d)*pcp + c at stage s."""
        i = self.i
        c, ed = rep % i.pcp, rep // i.pcp
        return self.rank(ed // i.dp, ed % i.dp, s, c, t)

    def moe_rank(self, e, s, r):
        """Rank r = (d*pcp + c)*tp + t of engine e's MoE group at stage s
        (flatten_tp_across_dp_and_pcp; vLLM's EP group of the stage)."""
        i = self.i
        t, dc = r % i.tp, r // i.tp
        return self.rank(e, dc // i.pcp, s, dc % i.pcp, t)

    def _name(self, base, s):
        return base if self.i.pp == 1 else f"{base}_pp{s}"

    def engine_mesh(self, s=0):
        # Replica (e*dp + d)*pcp + c of TP rank t; replication is `dp`.
        i = self.i
        return self._mesh(self._name("infer", s), lambda name: DeviceMesh(
            [[self.replica(rep, s, t) for t in range(i.tp)]
             for rep in range(i.replicas)], ("dp", "tp"), name=name))

    def moe_mesh(self, s=0):
        # Without EP, FusedMoE's TP group is an engine's dp*pcp*tp ranks
        # of the stage (vLLM flattens DP and PCP into it: rank
        # (d*pcp + c)*tp + t), one copy per engine.
        i = self.i
        return self._mesh(self._name("infer_moe", s), lambda name: DeviceMesh(
            [[self.moe_rank(e, s, r) for r in range(i.engine_size)]
             for e in range(i.engines)], ("engines", "moe_tp"), name=name))

    def tp_mesh(self, ts, kv_heads, s=0):
        """The engines' TP ranks ts: one (infer_tp{t}), or the replicas of
        a KV head (infer_kv{head})."""
        i = self.i
        if len(ts) == 1:
            return self._mesh(self._name(f"infer_tp{ts[0]}", s),
                              lambda name: DeviceMesh(
                                  [self.replica(rep, s, ts[0])
                                   for rep in range(i.replicas)],
                                  ("dp",), name=name))
        rep = i.tp // kv_heads
        head = ts[0] // rep
        if list(ts) != list(range(head * rep, (head + 1) * rep)):
            raise ReshardError(f"vLLM: TP ranks {list(ts)} are not the "
                               f"replicas of one KV head")
        return self._mesh(self._name(f"infer_kv{head}", s),
                          lambda name: DeviceMesh(
                              [[self.replica(r, s, t) for t in ts]
                               for r in range(i.replicas)],
                              ("dp", "tp_rep"), name=name))

    def fused(self, p, m):
        """(blocks, order) of a Param (not a KV-split qkv)."""
        blocks = {0: p.blocks} if p.blocks else None
        if p.role == "qkv" and m.attn_output_gate:
            return blocks, {0: qkv_order(m)}
        if (p.expert is not None and self.i.w13 == "up_gate"
                and p.role != "glu"
                and p.name.endswith(f".{m.expert_names[0]}.weight")):
            f = p.shape[0] // 2             # [up; gate] of [gate; up]
            return blocks, {0: [[f, f], [0, f]]}
        return blocks, None

    def dim_order(self, p):
        """gpt-oss's w13 interleaves gate and up rows: its [2, f, h] gate_up
        (bias [2, f]) is stored with f outermost (docs/Layout.md "Dim
        orders")."""
        if p.role == "glu":
            return [1, 0] + list(range(2, len(p.shape)))
        return None

    def moe_first_mesh(self, s=0):
        """The first rank of each engine's expert TP group (the rank that
        keeps gpt-oss's w2_bias; the others hold zeros)."""
        i = self.i
        return self._mesh(self._name("infer_moe_tp0", s),
                          lambda name: DeviceMesh(
                              [self.moe_rank(e, s, 0)
                               for e in range(i.engines)],
                              ("engines",), name=name))

    def ep_mesh(self, r, s=0):
        # Expert parallel rank r of each engine holds its experts whole: a
        # 0-D mesh for one engine, else the engines' copies.
        i = self.i
        if i.engines == 1:
            return self._mesh(self._name(f"infer_ep{r}", s),
                              lambda name: DeviceMesh(
                                  self.moe_rank(0, s, r), (), name=name))
        return self._mesh(self._name(f"infer_ep{r}", s),
                          lambda name: DeviceMesh(
                              [self.moe_rank(e, s, r)
                               for e in range(i.engines)],
                              ("engines",), name=name))

    def tied_embedding_mesh(self):
        # With tied embeddings the last stage holds the embedding too
        # (its lm_head's weight): the first and last stages' replicas.
        i, last = self.i, self.i.pp - 1
        return self._mesh("infer_embed", lambda name: DeviceMesh(
            [[[self.replica(rep, s, t) for t in range(i.tp)]
              for rep in range(i.replicas)] for s in (0, last)],
            ("pp", "dp", "tp"), name=name))

    def vocab_mesh(self, p, m, t):
        """The ranks that hold TP rank t's rows of the embedding or lm_head
        (a piece of it, refit._vocab_pieces): that rank of every replica,
        of the first and last stages for a tied embedding with pp > 1."""
        if p.layer == "first" and m.tie_embeddings and self.i.pp > 1:
            i, last = self.i, self.i.pp - 1
            return self._mesh(f"infer_embed_tp{t}", lambda name: DeviceMesh(
                [[self.replica(rep, s, t) for rep in range(i.replicas)]
                 for s in (0, last)], ("pp", "dp"), name=name))
        return self.tp_mesh([t], m.kv_heads, self.stage(p.layer))

    def physical_experts(self, layer, m):
        """The logical expert of each physical expert of a MoE layer under
        EPLB: vLLM's initial map, or expert_map's row for the layer (one
        row for all; a row per MoE layer of the model; or, per stage, row
        k of the stage's map for its k-th MoE layer, as each stage's
        EplbState numbers them)."""
        i = self.i
        if i.expert_map is None:
            return list(range(m.experts)) + [k % m.experts
                                             for k in range(i.redundant)]
        if not per_stage_maps(i):
            rows = i.expert_map
            return list(rows[0] if len(rows) == 1 else
                        rows[sum(m.is_moe(g) for g in range(layer))])
        s = self.stage(layer)
        k = sum(m.is_moe(g) for g in range(layer) if self.stage_of[g] == s)
        rows = i.expert_map[s]
        if k >= len(rows):
            raise ReshardError(
                f"vLLM: expert_map of stage {s} has {len(rows)} rows, but "
                f"layer {layer} is the stage's MoE layer {k}")
        err = check_map_row(m, i, f"stage {s} row {k}", rows[k])
        if err:
            raise ReshardError(err)
        return list(rows[k])

    def expert_copies(self, p, m):
        """Under EPLB, the copies of a routed expert: [[(EP rank, slot)]]
        by copy index: copy 0 the first slot of every EP rank that holds
        one, copy 1 the second of those that hold two, ... (vLLM's
        rebalancing may give one rank several copies), and L. A rank holds
        physical experts r*L .. r*L + L - 1 in slots 0 .. L-1. Worked out
        once a layer, for all its experts."""
        if p.layer not in self._copies:
            phys = self.physical_experts(p.layer, m)
            per_rank = len(phys) // self.i.engine_size
            by_expert, seen = {}, {}
            for k, x in enumerate(phys):
                r, j = divmod(k, per_rank)
                c = seen[r, x] = seen.get((r, x), -1) + 1
                copies = by_expert.setdefault(x, [])
                if c == len(copies):
                    copies.append([])
                copies[c].append((r, j))
            self._copies[p.layer] = (by_expert, per_rank)
        by_expert, per_rank = self._copies[p.layer]
        return by_expert[p.expert], per_rank

    def eplb_mesh(self, ranks, s=0):
        """The EP ranks holding copies of one expert, in each engine."""
        i = self.i
        if len(ranks) == 1:
            return self.ep_mesh(ranks[0], s)
        name = self._name("infer_ep" + "_".join(map(str, ranks)), s)
        if i.engines == 1:
            return self._mesh(name, lambda n: DeviceMesh(
                [self.moe_rank(0, s, r) for r in ranks], ("copy",), name=n))
        return self._mesh(name, lambda n: DeviceMesh(
            [[self.moe_rank(e, s, r) for r in ranks]
             for e in range(i.engines)], ("engines", "copy"), name=n))

    def expert_tensors(self, p, m):
        """Under EPLB, the layout tensors of a routed expert: (name, mesh,
        JSON extras) of each copy index, the first named as the expert,
        the others `<name>.copy{c}` with `copy_of`; `expert_slots` gives
        {"dst": [[global rank, slot], ...]} and `expert_stack` the slots a
        rank has (w13_weight's rows), for vllm_tensors."""
        s = self.stage(p.layer)
        copies, per_rank = self.expert_copies(p, m)
        out = []
        for c, held in enumerate(copies):
            extra = {"expert_slots": {"dst": [
                [self.moe_rank(e, s, r), j] for e in range(self.i.engines)
                for r, j in held]}, "expert_stack": per_rank}
            name = p.name
            if c:
                name = f"{p.name}.copy{c}"
                extra = dict(copy_of=p.name, **extra)
            out.append((name, self.eplb_mesh([r for r, _ in held], s),
                        extra))
        return out

    def place(self, p, m):
        """(mesh, dims) of a Param (not a KV-split qkv)."""
        n = len(p.shape)
        s = self.stage(p.layer)
        if p.layer == "first" and m.tie_embeddings and self.i.pp > 1:
            return self.tied_embedding_mesh(), tp_dims(n, p.role, ["tp"])
        if p.expert is not None and self.i.eplb:
            raise ReshardError(f"{p.name}: under EPLB, expert_tensors "
                               f"places routed experts")
        if p.expert is not None and self.i.ep:
            r = ep_rank_of(p.expert, m.experts, self.i.engine_size,
                           self.i.placement)
            return self.ep_mesh(r, s), [[] for _ in range(n)]
        if p.role == "rep_tp0":
            return self.moe_first_mesh(s), [[] for _ in range(n)]
        if p.expert is not None and self.i.engine_size > self.i.tp:
            return self.moe_mesh(s), tp_dims(n, p.role, ["moe_tp"])
        role = p.role
        if role in ("scol", "srow") and self.i.seq_parallel_moe:
            role = "rep"
        return self.engine_mesh(s), tp_dims(n, role, ["tp"])
