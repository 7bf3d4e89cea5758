#!/usr/bin/env python3
"""Writes the layout JSON of a whole-model refit, with real model shapes.

A refit scenario is one model (Llama-3.1-70B, Qwen3-235B-A22B or DeepSeek-V3),
a Megatron-Core training layout (--train "tp=8,pp=2,dp=4"), a vLLM inference
layout (--infer "tp=8,dp=4") and a cluster topology (--topology dgx-h100).
Every parameter of the model becomes one `tensors[]` entry of the format in
README.md ("The layout interchange format"), written one per line. Standard
library only; importable (see build_layout / write_layout / SCENARIOS).

  python3 bench/make_refit_scenario.py --list
  python3 bench/make_refit_scenario.py --scenario deepseek-v3-dgx --out f.json
  python3 bench/make_refit_scenario.py --model deepseek-v3 \\
      --train "tp=8,ep=8,pp=4,dp=1" --infer "tp=8,dp=8,ep=1" \\
      --topology dgx-h100 --out FILE.json
  # small enough to execute with `reshard-run FILE --check`:
  python3 bench/make_refit_scenario.py --scenario qwen235b-dgx --layers 2 \\
      --scale-down 64 --out small.json

The total parameter count goes to stderr, with the public count of the model.

Tensor names and logical shapes
-------------------------------
Names are the Hugging Face checkpoint names (model.layers.N.self_attn.o_proj
.weight, ...), except where vLLM fuses several checkpoint tensors into one
parameter; then the vLLM parameter is the tensor, and the fused dim carries
`blocks` (DESIGN.md "Blocks") so that each tensor-parallel shard holds its
piece of every block, exactly as vLLM's MergedColumnParallelLinear /
QKVParallelLinear store them:

  self_attn.qkv_proj        = [q_proj; k_proj; v_proj]     blocks [q, kv, kv]
  mlp.gate_up_proj          = [gate_proj; up_proj]         blocks [f, f]
  mlp.shared_experts.gate_up_proj                          blocks [f, f]
  mlp.experts.E.gate_up_proj (one tensor per expert)       blocks [f, f]
  self_attn.fused_qkv_a_proj = [q_a_proj; kv_a_proj_with_mqa]  (DeepSeek MLA;
      vllm/model_executor/models/deepseek_v2.py builds it as a replicated
      MergedColumnParallelLinear(disable_tp=True) when q_lora_rank is set)

vLLM stores routed experts as 3-D tensors (FusedMoE w13_weight [E_local,
2f, h], w2_weight [E_local, h, f]); expert E's gate_up_proj / down_proj here
is one row of those, a contiguous sub-buffer, so a per-expert tensor is
exactly addressable by a pointer on the inference side.

The same logical tensor is used on the trainer side. Megatron-Core names and
local storage differ in two places that do not change which elements a rank
holds, only their order inside the rank (a local permutation, no traffic):
  * linear_qkv stores q/k/v interleaved per query group ([q_g; k_g; v_g] for
    each local group g). With one group per TP rank (Llama-3.1-70B at TP8)
    that is exactly the blocks layout; with several it is a permutation of
    the same rows.
  * MLA's linear_q_down_proj and linear_kv_down_proj are two separate
    replicated parameters (TELinear parallel_mode="duplicated",
    megatron/core/transformer/multi_latent_attention.py); here they are the
    two blocks of fused_qkv_a_proj.
Norm weights fused into Megatron linears (linear_qkv.layer_norm_weight,
linear_q_up_proj.layer_norm_weight, ...) are the HF norm tensors here.
All weights are bf16; DeepSeek's e_score_correction_bias is fp32 (Megatron
keeps router.expert_bias in fp32; vLLM allocates the parameter in fp32).

Trainer layout: Megatron-Core
-----------------------------
--train "tp=,pp=,dp=[,cp=][,ep=][,etp=][,first=,last=]"; cp (context
parallel) replicates weights like dp.
* Rank order: megatron/core/parallel_state.py initialize_model_parallel,
  default order="tp-cp-ep-dp-pp" (first = fastest). Dense (non-expert) ranks
  come from RankGenerator(tp, cp, dp, pp, ep=1):
      rank = tp_i + tp*(cp_i + cp*(dp_i + dp*pp_i))
  expert ranks from RankGenerator(tp=etp, ep, dp=edp, pp, cp=1) on the same
  world, edp = tp*cp*dp / (ep*etp) ("expert data parallel"):
      rank = etp_i + etp*(ep_i + ep*(edp_i + edp*pp_i))
  World size = tp*cp*dp*pp (the trainer's ranks are 0..N-1 by default).
* etp defaults to 1 (every published MoE recipe, e.g. Megatron-Bridge's
  DeepSeek-V3 and Qwen3 recipes, sets expert_tensor_parallel_size=1; note
  that initialize_model_parallel's own default is etp=tp).
* Pipeline: stage p owns a contiguous layer range. Megatron's default is an
  even split (num_layers % pp == 0). first=/last= mirror
  --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers
  (NeMo RL: num_layers_in_first/last_pipeline_stage): the middle stages split
  the rest evenly. If neither applies (e.g. 61 layers over pp=4 without
  first/last, or with --layers), the split is as even as possible, the extra
  layers going to the middle stages first, and a note says so on stderr.
  Embedding on the first stage; final norm and lm_head on the last.
* A non-expert tensor of stage p lives on mesh train_pp{p} = [dp, (cp,) tp]
  (dp and cp replicas hold identical weights) with Megatron TP sharding:
  column-parallel (qkv, gate_up, q_b/kv_b projections, shared-expert
  gate_up, VocabParallelEmbedding and the output layer, vocab-parallel) split
  dim 0 over tp; row-parallel (o_proj, down_proj) split dim 1; norms, routers,
  the expert bias and MLA down projections replicated. The vocab is unpadded
  (Megatron-Bridge's GPTModelProvider has should_pad_vocab=False for HF
  models) and VocabUtility requires vocab % tp == 0, so Megatron's vocab
  shards are torch.chunk shards.
* Routed expert E of a layer on stage p is owned by EP rank g = E // (E_total
  / ep) (contiguous: MoELayer local_expert_indices); it lives on mesh
  train_pp{p}_ep{g} = [edp, etp] (edp replicas), gate_up split dim 0 and
  down split dim 1 over etp (expert linear_fc1 / linear_fc2).

Inference layout: vLLM
----------------------
--infer "tp=,dp=[,ep=0|1][,spmoe=auto|0|1]".
* dp engines of tp ranks each; engine d, TP rank t is global rank
  first + d*tp + t. Engines are replicas, so dense tensors live on one mesh
  `infer` = [dp, tp] and replication is the dp axis. Sharding as vLLM's
  ColumnParallelLinear (dim 0) / RowParallelLinear (dim 1) /
  VocabParallelEmbedding and ParallelLMHead (dim 0; vLLM pads the vocab to a
  multiple of 64 and requires the padded size % tp == 0; the generator
  requires vocab % 64 == 0 and vocab % tp == 0 so the shards are torch.chunk
  shards) / ReplicatedLinear and norms (replicated).
* KV heads when tp > num_kv_heads: QKVParallelLinear gives every rank one KV
  head and replicates it: rank t holds KV head t // (tp / num_kv_heads)
  (num_kv_head_replicas). A fused qkv tensor cannot say that (blocks share
  one axis list), so in that case, and only then, the tensor is written as
  three tensors named q_proj / k_proj / v_proj (each annotated with
  "fused_into": "...qkv_proj.weight"): q on `infer` split over tp, k and v on
  the view `infer_kv` = [dp, tp_kv, tp_rep] of the same ranks (tp = tp_kv *
  tp_rep, tp_kv = num_kv_heads) split over tp_kv only. Each rank's fused
  buffer is [q_local; k_local; v_local] along dim 0, so the three destination
  shards are contiguous row ranges of it: faithful and pointer-exact.
* Expert parallel (ep=1, or ep=tp*dp; vLLM --enable-expert-parallel): one
  vLLM deployment with data_parallel_size=dp; FusedMoEParallelConfig
  flattens ep_rank = dp_rank*tp + tp_rank over all tp*dp ranks and
  determine_expert_map's "linear" placement gives EP rank r the contiguous
  experts [r*base + min(r, rem), ...) (base = E // ep, the first rem ranks
  one more). Expert E lives whole on its rank (a 0-D mesh infer_ep{r}).
  Without EP, experts are tensor-parallel in each engine (gate_up dim 0,
  down dim 1 over tp) and replicated over engines (independent engines, as
  NeMo RL runs them; a single vLLM deployment with dp>1 and no EP would
  instead flatten the MoE TP group over dp*tp, which is not modelled).
* spmoe: vLLM's ParallelConfig.use_sequence_parallel_moe (EP and tp>1 and
  dp>1 with the default allgather_reducescatter all2all backend) builds the
  DeepSeek shared experts with disable_tp=True, i.e. replicated. Default
  spmoe=auto follows that rule; spmoe=0/1 forces it.

Placement and topology
----------------------
Trainer ranks 0..N-1; inference ranks N..N+M-1 (disjoint clusters), or
0..M-1 with --colocated, or from --infer-first-rank R. Topology presets:
dgx-h100 (8 GPUs per node, NVLink domain 8, NIC 50 GB/s and NVLink 450 GB/s
per GPU, latencies 5 us / 1 us) and gb200-nvl72 (4 GPUs per node, NVLink
domain 72, NIC 50 GB/s, NVLink 900 GB/s, same latencies).

--scale-down F divides every hidden-like dimension (hidden, intermediate
sizes, head dims, MLA ranks) by F, keeping head, KV-head, expert and layer
counts, so every divisibility the frameworks need still holds; the vocab is
divided and rounded up to a multiple of lcm(64, train tp, infer tp).
"""
import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, fields, replace


# --------------------------------------------------------------------------
# Models: values from each model's public Hugging Face config.json.
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Model:
    name: str
    hf_id: str
    layers: int              # num_hidden_layers
    hidden: int              # hidden_size
    heads: int               # num_attention_heads
    kv_heads: int            # num_key_value_heads (GQA); == heads for MLA
    head_dim: int            # head_dim (GQA)
    intermediate: int        # dense MLP intermediate_size
    vocab: int               # vocab_size (embeddings untied)
    public_params: int       # published total, rounded as published
    public_label: str
    qk_norm: bool = False    # Qwen3: q_norm / k_norm over head_dim
    experts: int = 0         # routed experts per MoE layer (0: dense model)
    moe_intermediate: int = 0
    shared_experts: int = 0
    first_dense: int = 0     # first_k_dense_replace
    score_bias: bool = False  # router e_score_correction_bias (DeepSeek)
    mla: bool = False
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0


MODELS = {
    # meta-llama/Llama-3.1-70B config.json: num_hidden_layers 80,
    # hidden_size 8192, num_attention_heads 64, num_key_value_heads 8,
    # intermediate_size 28672, vocab_size 128256, tie_word_embeddings false;
    # head_dim = hidden_size / num_attention_heads = 128.
    "llama-3.1-70b": Model(
        name="llama-3.1-70b", hf_id="meta-llama/Llama-3.1-70B",
        layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
        intermediate=28672, vocab=128256,
        public_params=70_550_000_000, public_label="70.55B"),
    # Qwen/Qwen3-235B-A22B config.json: num_hidden_layers 94, hidden_size
    # 4096, num_attention_heads 64, num_key_value_heads 4, head_dim 128,
    # num_experts 128 (num_experts_per_tok 8), moe_intermediate_size 1536,
    # decoder_sparse_step 1 and mlp_only_layers [] (every layer is MoE, so
    # intermediate_size 12288 is unused), no shared experts, vocab_size
    # 151936, tie_word_embeddings false; Qwen3 attention has q_norm/k_norm
    # (RMSNorm over head_dim); router mlp.gate.weight [128, 4096].
    "qwen3-235b-a22b": Model(
        name="qwen3-235b-a22b", hf_id="Qwen/Qwen3-235B-A22B",
        layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128,
        intermediate=12288, vocab=151936, qk_norm=True,
        experts=128, moe_intermediate=1536,
        public_params=235_090_000_000, public_label="235.09B"),
    # deepseek-ai/DeepSeek-V3 config.json: num_hidden_layers 61,
    # first_k_dense_replace 3 (intermediate_size 18432), hidden_size 7168,
    # num_attention_heads 128, q_lora_rank 1536, kv_lora_rank 512,
    # qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128,
    # n_routed_experts 256, n_shared_experts 1, moe_intermediate_size 2048,
    # router mlp.gate.weight [256, 7168] + e_score_correction_bias [256]
    # (topk_method noaux_tc), vocab_size 129280, tie_word_embeddings false.
    # num_nextn_predict_layers 1 (the MTP layer, ~14B) is left out: 671B.
    "deepseek-v3": Model(
        name="deepseek-v3", hf_id="deepseek-ai/DeepSeek-V3",
        layers=61, hidden=7168, heads=128, kv_heads=128, head_dim=0,
        intermediate=18432, vocab=129280,
        experts=256, moe_intermediate=2048, shared_experts=1, first_dense=3,
        score_bias=True, mla=True, q_lora_rank=1536, kv_lora_rank=512,
        qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
        public_params=671_030_000_000, public_label="671.03B (no MTP)"),
}

# Dimensions --scale-down divides (counts of heads, experts, layers stay).
SCALED_DIMS = ("hidden", "head_dim", "intermediate", "moe_intermediate",
               "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
               "qk_rope_head_dim", "v_head_dim")

TOPOLOGIES = {
    "dgx-h100": {"gpus_per_node": 8, "nvl_domain_size": 8,
                 "nic_GBps_per_gpu": 50, "nvlink_GBps_per_gpu": 450,
                 "nic_latency_us": 5, "nvlink_latency_us": 1},
    "gb200-nvl72": {"gpus_per_node": 4, "nvl_domain_size": 72,
                    "nic_GBps_per_gpu": 50, "nvlink_GBps_per_gpu": 900,
                    "nic_latency_us": 5, "nvlink_latency_us": 1},
}

# --------------------------------------------------------------------------
# Bundled scenarios. The *-gb200 ones repeat the DGX layouts on the GB200
# NVL72 topology, so that the topology is the only difference in a pair.
# --------------------------------------------------------------------------

_LLAMA = dict(
    model="llama-3.1-70b",
    # Megatron TP8 PP2 DP4 on 64 GPUs (80 layers -> 40 + 40) -> 4 vLLM
    # engines of TP8 on 32 GPUs. TP8 inside a node is the standard 70B
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
    # vLLM: tp=8 with expert parallel over dp=8 engines (64 GPUs, 2 experts
    # per GPU); 4 KV heads < tp 8, so KV heads are replicated 2x.
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

SCENARIOS = {
    "llama70b-dgx": dict(_LLAMA, topology="dgx-h100"),
    "qwen235b-dgx": dict(_QWEN, topology="dgx-h100"),
    "deepseek-v3-dgx": dict(_DSV3, topology="dgx-h100"),
    "llama70b-gb200": dict(_LLAMA, topology="gb200-nvl72"),
    "qwen235b-gb200": dict(_QWEN, topology="gb200-nvl72"),
    "deepseek-v3-gb200": dict(_DSV3, topology="gb200-nvl72"),
}


# --------------------------------------------------------------------------
# Parallel layouts
# --------------------------------------------------------------------------

class LayoutError(ValueError):
    pass


def _parse_spec(text, allowed, what):
    out = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, sep, val = item.partition("=")
        key = key.strip()
        if not sep or key not in allowed:
            raise LayoutError(f"{what}: bad item {item!r} (keys: "
                              f"{', '.join(allowed)})")
        if key in out:
            raise LayoutError(f"{what}: {key} given twice")
        val = val.strip()
        if key == "spmoe" and val == "auto":
            out[key] = None
            continue
        try:
            out[key] = int(val)
        except ValueError:
            raise LayoutError(f"{what}: {key}={val!r} is not an integer")
        if out[key] < 0 or (out[key] == 0 and key not in ("ep", "spmoe",
                                                           "first", "last")):
            raise LayoutError(f"{what}: {key} must be positive")
    return out


@dataclass(frozen=True)
class Train:
    tp: int
    dp: int
    pp: int = 1
    cp: int = 1
    ep: int = 1
    etp: int = 1
    first: int = None
    last: int = None

    @property
    def stage_size(self):
        return self.tp * self.cp * self.dp

    @property
    def world(self):
        return self.stage_size * self.pp

    @property
    def edp(self):
        return self.stage_size // (self.ep * self.etp)


@dataclass(frozen=True)
class Infer:
    tp: int
    dp: int = 1
    ep: bool = False
    spmoe: bool = None       # None: vLLM's rule (ep and tp > 1 and dp > 1)

    @property
    def world(self):
        return self.tp * self.dp

    @property
    def seq_parallel_moe(self):
        if self.spmoe is None:
            return self.ep and self.tp > 1 and self.dp > 1
        return self.spmoe


def parse_train(text):
    """'tp=8,pp=2,dp=4[,cp=][,ep=][,etp=][,first=,last=]' -> Train."""
    d = _parse_spec(text, ("tp", "pp", "dp", "cp", "ep", "etp", "first",
                           "last"), "--train")
    if "tp" not in d or "dp" not in d:
        raise LayoutError("--train needs tp= and dp=")
    if ("first" in d) != ("last" in d):
        raise LayoutError("--train: give first= and last= together")
    return Train(**d)


def parse_infer(text):
    """'tp=8,dp=4[,ep=0|1|tp*dp][,spmoe=auto|0|1]' -> Infer."""
    d = _parse_spec(text, ("tp", "dp", "ep", "spmoe"), "--infer")
    if "tp" not in d:
        raise LayoutError("--infer needs tp=")
    tp, dp = d["tp"], d.get("dp", 1)
    ep = d.get("ep", 0)
    if ep not in (0, 1) and ep != tp * dp:
        raise LayoutError(f"--infer: ep={ep}: vLLM's expert parallel group is "
                          f"all tp*dp = {tp * dp} ranks; give ep=1 (enable) "
                          f"or ep=0")
    spmoe = d.get("spmoe")
    if spmoe not in (None, 0, 1):
        raise LayoutError("--infer: spmoe must be auto, 0 or 1")
    return Infer(tp=tp, dp=dp, ep=bool(ep),
                 spmoe=None if spmoe is None else bool(spmoe))


def pipeline_split(layers, t):
    """Layer count of each of the t.pp stages (see the file header)."""
    pp = t.pp
    if t.first is not None:
        mid = layers - t.first - t.last
        if pp == 1:
            ok = t.first == t.last == layers
            counts = [layers]
        elif pp == 2:
            ok = mid == 0
            counts = [t.first, t.last]
        else:
            ok = mid >= 0 and mid % (pp - 2) == 0
            counts = [t.first] + [mid // (pp - 2) if ok else 0] * (pp - 2) \
                + [t.last]
        if not ok and pp <= 2:
            raise LayoutError(f"first={t.first}, last={t.last}: with pp={pp} "
                              f"they must cover all {layers} layers")
        if not ok:
            raise LayoutError(
                f"first={t.first}, last={t.last}: the other {mid} of "
                f"{layers} layers do not split evenly over {pp - 2} middle "
                f"stages")
        return counts
    base, rem = divmod(layers, pp)
    counts = [base] * pp
    order = list(range(1, pp - 1)) + [0, pp - 1] if pp > 2 else list(range(pp))
    for s in order[:rem]:
        counts[s] += 1
    return counts


def _lcm(*xs):
    out = 1
    for x in xs:
        out = out * x // math.gcd(out, x)
    return out


def scale_model(m, factor, tps):
    """The model with every hidden-like dimension divided by factor."""
    if factor == 1:
        return m
    changes = {}
    for f in SCALED_DIMS:
        v = getattr(m, f)
        if v % factor:
            raise LayoutError(f"--scale-down {factor}: {m.name} {f}={v} is "
                              f"not divisible by {factor}")
        changes[f] = v // factor
    q = _lcm(64, *tps)
    changes["vocab"] = -(-max(1, m.vocab // factor) // q) * q
    return replace(m, **changes)


def validate(m, layers, t, i):
    """The divisibility rules Megatron-Core and vLLM enforce."""
    err = []
    if m.heads % t.tp:
        err.append(f"Megatron: num_attention_heads {m.heads} % tp {t.tp}")
    if not m.mla and m.kv_heads % t.tp:
        err.append(f"Megatron: num_query_groups {m.kv_heads} % tp {t.tp}")
    if m.first_dense or not m.experts:
        if m.intermediate % t.tp:
            err.append(f"Megatron: ffn_hidden_size {m.intermediate} % tp")
    if m.vocab % t.tp:
        err.append(f"Megatron: vocab {m.vocab} % tp {t.tp} (unpadded vocab)")
    if m.experts:
        if m.experts % t.ep:
            err.append(f"Megatron: num_moe_experts {m.experts} % ep {t.ep}")
        if m.moe_intermediate % t.etp:
            err.append(f"Megatron: moe_ffn_hidden_size % etp {t.etp}")
        if t.stage_size % (t.ep * t.etp):
            err.append(f"Megatron: tp*cp*dp = {t.stage_size} is not a "
                       f"multiple of ep*etp = {t.ep * t.etp}")
        if m.shared_experts and (m.moe_intermediate * m.shared_experts) % t.tp:
            err.append("Megatron: shared expert intermediate % tp")
    elif t.ep != 1 or t.etp != 1:
        err.append(f"{m.name} has no experts: ep and etp must be 1")
    if m.heads % i.tp:
        err.append(f"vLLM: num_heads {m.heads} % tp {i.tp}")
    if not m.mla and m.kv_heads % i.tp and i.tp % m.kv_heads:
        err.append(f"vLLM: tp {i.tp} and num_kv_heads {m.kv_heads}: neither "
                   f"divides the other")
    if (m.first_dense or not m.experts) and m.intermediate % i.tp:
        err.append(f"vLLM: intermediate_size {m.intermediate} % tp {i.tp}")
    if i.tp > 1 and (m.vocab % 64 or m.vocab % i.tp):
        err.append(f"vLLM: vocab {m.vocab} must be a multiple of 64 and of tp "
                   f"(VocabParallelEmbedding padding)")
    if m.experts:
        if not i.ep and m.moe_intermediate % i.tp:
            err.append(f"vLLM: moe_intermediate_size % tp {i.tp} (no EP)")
        if i.ep and m.experts < i.world:
            err.append(f"vLLM: {m.experts} experts < ep size {i.world}")
        if (m.shared_experts and not i.seq_parallel_moe
                and (m.moe_intermediate * m.shared_experts) % i.tp):
            err.append("vLLM: shared expert intermediate % tp")
    if err:
        raise LayoutError("; ".join(err))


# --------------------------------------------------------------------------
# The model's tensors, each with its parallel role
# --------------------------------------------------------------------------
# role: "rep" replicated, "col" split dim 0 over TP, "row" split dim 1,
#       "qkv" column-parallel q/k/v (KV-head replication aware).
# expert: index of a routed expert (None for non-expert tensors).

@dataclass
class Param:
    name: str
    shape: list
    role: str
    layer: object            # layer index, "first" (embedding) or "last"
    blocks: list = None      # blocks of dim 0
    expert: int = None
    dtype: str = "bf16"


def model_params(m, layers):
    h = m.hidden
    out = [Param("model.embed_tokens.weight", [m.vocab, h], "col", "first")]
    for l in range(layers):
        p = f"model.layers.{l}"

        def add(name, shape, role, **kw):
            out.append(Param(f"{p}.{name}", shape, role, l, **kw))

        add("input_layernorm.weight", [h], "rep")
        if m.mla:
            q_head = m.qk_nope_head_dim + m.qk_rope_head_dim
            kv_a = m.kv_lora_rank + m.qk_rope_head_dim
            add("self_attn.fused_qkv_a_proj.weight", [m.q_lora_rank + kv_a, h],
                "rep", blocks=[m.q_lora_rank, kv_a])
            add("self_attn.q_a_layernorm.weight", [m.q_lora_rank], "rep")
            add("self_attn.q_b_proj.weight", [m.heads * q_head, m.q_lora_rank],
                "col")
            add("self_attn.kv_a_layernorm.weight", [m.kv_lora_rank], "rep")
            add("self_attn.kv_b_proj.weight",
                [m.heads * (m.qk_nope_head_dim + m.v_head_dim),
                 m.kv_lora_rank], "col")
            add("self_attn.o_proj.weight", [h, m.heads * m.v_head_dim], "row")
        else:
            q, kv = m.heads * m.head_dim, m.kv_heads * m.head_dim
            add("self_attn.qkv_proj.weight", [q + 2 * kv, h], "qkv",
                blocks=[q, kv, kv])
            if m.qk_norm:
                add("self_attn.q_norm.weight", [m.head_dim], "rep")
                add("self_attn.k_norm.weight", [m.head_dim], "rep")
            add("self_attn.o_proj.weight", [h, q], "row")
        add("post_attention_layernorm.weight", [h], "rep")
        if not m.experts or l < m.first_dense:
            f = m.intermediate
            add("mlp.gate_up_proj.weight", [2 * f, h], "col", blocks=[f, f])
            add("mlp.down_proj.weight", [h, f], "row")
            continue
        add("mlp.gate.weight", [m.experts, h], "rep")
        if m.score_bias:
            add("mlp.gate.e_score_correction_bias", [m.experts], "rep",
                dtype="fp32")
        if m.shared_experts:
            fs = m.moe_intermediate * m.shared_experts
            add("mlp.shared_experts.gate_up_proj.weight", [2 * fs, h], "scol",
                blocks=[fs, fs])
            add("mlp.shared_experts.down_proj.weight", [h, fs], "srow")
        f = m.moe_intermediate
        for e in range(m.experts):
            add(f"mlp.experts.{e}.gate_up_proj.weight", [2 * f, h], "col",
                blocks=[f, f], expert=e)
            add(f"mlp.experts.{e}.down_proj.weight", [h, f], "row", expert=e)
    out.append(Param("model.norm.weight", [h], "rep", "last"))
    out.append(Param("lm_head.weight", [m.vocab, h], "col", "last"))
    return out


def count_params(params):
    return sum(math.prod(p.shape) for p in params)


# --------------------------------------------------------------------------
# Meshes and shardings
# --------------------------------------------------------------------------

def _dims(rank, role, axes):
    """dims list for a 1-D or 2-D tensor: role on the given axis list."""
    dims = [[] for _ in range(rank)]
    if role in ("col", "qkv", "scol"):
        dims[0] = list(axes)
    elif role in ("row", "srow"):
        dims[1] = list(axes)
    return dims


class MegatronSide:
    def __init__(self, t, stage_counts, first_rank=0):
        self.t = t
        self.first_rank = first_rank
        self.stage_of = []
        for s, n in enumerate(stage_counts):
            self.stage_of += [s] * n
        self.meshes = {}

    def stage(self, layer):
        if layer == "first":
            return 0
        if layer == "last":
            return self.t.pp - 1
        return self.stage_of[layer]

    def dense_mesh(self, s):
        t = self.t
        name = f"train_pp{s}"
        if name not in self.meshes:
            base = self.first_rank + s * t.stage_size
            # order tp-cp-ep-dp-pp: row-major over [dp, cp, tp].
            ranks = list(range(base, base + t.stage_size))
            if t.cp == 1:
                self.meshes[name] = mesh([t.dp, t.tp], ["dp", "tp"], ranks)
            else:
                self.meshes[name] = mesh([t.dp, t.cp, t.tp],
                                         ["dp", "cp", "tp"], ranks)
        return name

    def expert_mesh(self, s, g):
        t = self.t
        name = f"train_pp{s}_ep{g}"
        if name not in self.meshes:
            base = self.first_rank + s * t.stage_size
            ranks = [base + (d * t.ep + g) * t.etp + x
                     for d in range(t.edp) for x in range(t.etp)]
            self.meshes[name] = mesh([t.edp, t.etp], ["edp", "etp"], ranks)
        return name

    def place(self, p, m):
        s = self.stage(p.layer)
        if p.expert is not None:
            g = p.expert // (m.experts // self.t.ep)
            return self.expert_mesh(s, g), _dims(len(p.shape), p.role, ["etp"])
        return self.dense_mesh(s), _dims(len(p.shape), p.role, ["tp"])


class VllmSide:
    def __init__(self, i, first_rank):
        self.i = i
        self.first_rank = first_rank
        self.meshes = {}

    def ranks(self):
        return list(range(self.first_rank, self.first_rank + self.i.world))

    def engine_mesh(self):
        if "infer" not in self.meshes:
            self.meshes["infer"] = mesh([self.i.dp, self.i.tp], ["dp", "tp"],
                                        self.ranks())
        return "infer"

    def kv_mesh(self, kv_heads):
        if "infer_kv" not in self.meshes:
            self.meshes["infer_kv"] = mesh(
                [self.i.dp, kv_heads, self.i.tp // kv_heads],
                ["dp", "tp_kv", "tp_rep"], self.ranks())
        return "infer_kv"

    def ep_rank_of(self, e, n_experts):
        # determine_expert_map, "linear": the first `rem` ranks get one more.
        base, rem = divmod(n_experts, self.i.world)
        big = rem * (base + 1)
        return e // (base + 1) if e < big else rem + (e - big) // base

    def ep_mesh(self, r):
        name = f"infer_ep{r}"
        if name not in self.meshes:
            self.meshes[name] = mesh([], [], [self.first_rank + r])
        return name

    def place(self, p, m):
        n = len(p.shape)
        if p.expert is not None and self.i.ep:
            return (self.ep_mesh(self.ep_rank_of(p.expert, m.experts)),
                    [[] for _ in range(n)])
        role = p.role
        if role in ("scol", "srow") and self.i.seq_parallel_moe:
            role = "rep"
        return self.engine_mesh(), _dims(n, role, ["tp"])


def mesh(shape, axes, ranks):
    return {"shape": shape, "axes": axes, "ranks": ranks}


def _side(mesh_name, dims, blocks):
    out = {"mesh": mesh_name, "dims": dims}
    if blocks:
        out["blocks"] = {"0": blocks}
    return out


def build_layout(model, train, infer, topology="dgx-h100", layers=None,
                 scale_down=1, colocated=False, infer_first_rank=None,
                 scenario=None):
    """The layout as a dict {scenario, meshes, topology, tensors} plus stats.

    model: a MODELS key or a Model; train/infer: spec strings or Train/Infer.
    """
    m = MODELS[model] if isinstance(model, str) else model
    t = parse_train(train) if isinstance(train, str) else train
    i = parse_infer(infer) if isinstance(infer, str) else infer
    topo = TOPOLOGIES[topology] if isinstance(topology, str) else topology
    n_layers = m.layers if layers is None else layers
    if not 0 <= n_layers <= m.layers:
        raise LayoutError(f"--layers must be in [0, {m.layers}]")
    full = count_params(model_params(m, m.layers))
    sm = scale_model(m, scale_down, (t.tp, i.tp))
    validate(sm, n_layers, t, i)
    counts = pipeline_split(n_layers, t)
    notes = []
    if t.first is None and n_layers % t.pp:
        notes.append(f"{n_layers} layers do not split evenly over pp={t.pp} "
                     f"(Megatron would need first=/last=); using {counts}")

    if infer_first_rank is None:
        infer_first_rank = 0 if colocated else t.world
    src = MegatronSide(t, counts)
    dst = VllmSide(i, infer_first_rank)
    kv_split = not sm.mla and i.tp > sm.kv_heads

    params = model_params(sm, n_layers)
    tensors = []
    for p in params:
        if p.role == "qkv" and kv_split:
            # vLLM replicates KV heads (tp > num_kv_heads): q, k, v as three
            # tensors; k and v split over the tp_kv view axis only.
            q, kv, _ = p.blocks
            base = p.name[:-len("qkv_proj.weight")]
            smesh, sdims = src.place(p, sm)
            for part, rows in (("q", q), ("k", kv), ("v", kv)):
                if part == "q":
                    dmesh, ddims = dst.engine_mesh(), [["tp"], []]
                else:
                    dmesh, ddims = dst.kv_mesh(sm.kv_heads), [["tp_kv"], []]
                tensors.append({
                    "name": f"{base}{part}_proj.weight",
                    "shape": [rows, p.shape[1]], "dtype": p.dtype,
                    "fused_into": p.name,
                    "src": _side(smesh, sdims, None),
                    "dst": _side(dmesh, ddims, None)})
            continue
        smesh, sdims = src.place(p, sm)
        dmesh, ddims = dst.place(p, sm)
        tensors.append({"name": p.name, "shape": p.shape, "dtype": p.dtype,
                        "src": _side(smesh, sdims, p.blocks),
                        "dst": _side(dmesh, ddims, p.blocks)})

    meshes = dict(src.meshes)
    meshes.update(dst.meshes)
    elems = count_params(params)
    nbytes = sum(math.prod(p.shape) * (4 if p.dtype == "fp32" else 2)
                 for p in params)
    info = {
        "name": scenario, "model": m.name, "hf_id": m.hf_id,
        "layers": n_layers, "scale_down": scale_down,
        "train": {"framework": "megatron-core", "tp": t.tp, "cp": t.cp,
                  "dp": t.dp, "pp": t.pp, "ep": t.ep, "etp": t.etp,
                  "edp": t.edp, "ranks": [0, t.world - 1],
                  "layers_per_stage": counts},
        "infer": {"framework": "vllm", "tp": i.tp, "dp": i.dp,
                  "expert_parallel": i.ep,
                  "shared_experts_replicated": bool(
                      sm.shared_experts and i.seq_parallel_moe),
                  "kv_head_replicas": (i.tp // sm.kv_heads if kv_split else 1),
                  "ranks": [infer_first_rank,
                            infer_first_rank + i.world - 1]},
        "params": elems, "bytes": nbytes, "full_model_params": full,
        "public_params": m.public_params, "notes": notes,
    }
    return {"scenario": info, "meshes": meshes, "topology": dict(topo),
            "tensors": tensors}


def write_layout(layout, f):
    """Writes the JSON: one mesh per line, one tensor per line."""
    f.write('{"scenario": ' + json.dumps(layout["scenario"]) + ',\n')
    f.write(' "meshes": {\n')
    f.write(",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}"
                       for k, v in layout["meshes"].items()))
    f.write('},\n "topology": ' + json.dumps(layout["topology"]) +
            ',\n "tensors": [\n')
    f.write(",\n".join("  " + json.dumps(t) for t in layout["tensors"]))
    f.write("\n]}\n")


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------

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
                   '(keys tp pp dp cp ep etp first last)')
    p.add_argument("--infer", help='vLLM layout, e.g. "tp=8,dp=4" or '
                   '"tp=8,dp=8,ep=1" (keys tp dp ep spmoe)')
    p.add_argument("--topology", choices=sorted(TOPOLOGIES))
    p.add_argument("--layers", type=int,
                   help="keep only the first N transformer layers (with "
                        "--scenario, its first=/last= are dropped)")
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
                           if item.split("=")[0] not in ("first", "last"))
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
        layout = build_layout(a.model, a.train, a.infer, a.topology,
                              layers=a.layers, scale_down=a.scale_down,
                              colocated=a.colocated,
                              infer_first_rank=a.infer_first_rank,
                              scenario=a.scenario)
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
