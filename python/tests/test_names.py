"""reshard.megatron_tensors / vllm_tensors against fake named_parameters()
of the frameworks' models: every rank's parameters, with Megatron-Core's
and vLLM's names and local shapes, are written here from the frameworks'
conventions (not from reshard's code), each one recording which layout
tensor it stores. Every layout tensor a rank holds must come back as a view
of the right parameter (at the right offset: one expert of a stacked
tensor, a KV-replicated piece at its fused_offset rows), every parameter
must be used, and a missing or mis-shaped parameter must be refused."""
import json
import math
import types

import pytest

torch = pytest.importorskip("torch")

import reshard  # noqa: E402
from reshard.errors import ReshardError  # noqa: E402
from reshard.megatron import parse_train, pipeline_split  # noqa: E402
from reshard.models import get_model, scale_model  # noqa: E402
from reshard.refit import build_layout  # noqa: E402
from reshard.vllm import parse_infer, pp_split  # noqa: E402

from orders_ref import (GPT_OSS, TINY_QWEN3_5, TINY_QWEN3_NEXT,  # noqa: E402
                        megatron_vocab_rows, small, vllm_vocab_rows)

BF16 = torch.bfloat16


class Module:
    """What the helpers read of an nn.Module: named_parameters(),
    named_buffers() and, for Megatron's decoder layers, named_modules()
    with each layer's global layer_number (1-based)."""

    def __init__(self, params, buffers=(), layers=(), prefix=""):
        self.params, self.buffers = list(params), list(buffers)
        self.layers, self.prefix = list(layers), prefix

    def named_parameters(self):
        return iter(self.params)

    def named_buffers(self):
        return iter(self.buffers)

    def named_modules(self):
        yield "", self
        for local, g in self.layers:
            yield (f"{self.prefix}decoder.layers.{local}",
                   types.SimpleNamespace(layer_number=g + 1))


class Params:
    """A rank's fake parameters; stores[layout tensor] lists the (tensor,
    index) that store it: index None for the whole tensor, j for row j of a
    stacked expert tensor."""

    def __init__(self, prefix=""):
        self.prefix = prefix
        self.params, self.buffers, self.stores = [], [], {}
        self.layers = []        # (local index, global layer)
        self.unused_ok = []     # parameters no layout tensor is

    def add(self, name, shape, stores, dtype=BF16, buffer=False,
            tensor=None):
        t = torch.empty(shape, dtype=dtype) if tensor is None else tensor
        (self.buffers if buffer else self.params).append(
            (self.prefix + name, t))
        if stores is not None:
            self.stores.setdefault(stores, []).append((t, None))
        return t

    def module(self):
        return Module(self.params, self.buffers, self.layers, self.prefix)

    def by_name(self):
        return dict(self.params + self.buffers)


class Chunks:
    """A rank's model chunks (virtual pipeline stages): Megatron's list of
    modules, each numbering its layers from 0."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.stores = {}
        for c in chunks:
            self.stores.update(c.stores)

    def module(self):
        return [c.module() for c in self.chunks]

    def by_name(self):
        return [c.by_name() for c in self.chunks]


# --- Megatron-Core GPTModel, one pipeline stage (TE spec) ------------------

def megatron_params(m, train, rank, layers, grouped=True, prefix="",
                    mla_adjacent=True):
    """The parameters rank `rank` of a Megatron-Core GPTModel holds
    (megatron/core/models/gpt/gpt_model.py, transformer_layer.py,
    attention.py, multi_latent_attention.py, moe/moe_layer.py, experts.py):
    its stage's layers numbered from 0, TP shards, its EP rank's experts
    numbered from 0 (TEGroupedMLP linear_fc1.weight{j}, or SequentialMLP
    local_experts.{j}); the router's expert_bias is a buffer."""
    t = parse_train(train)
    counts = pipeline_split(layers, t)
    stage, local = divmod(rank, t.stage_size)
    ep_i = (local // t.etp) % t.ep          # rank = etp + etp*(ep + ep*edp)
    tp, etp, h = t.tp, t.etp, m.hidden
    if t.layout is not None:    # virtual stage i = v*pp + p, in order
        sizes = [s.count("t") for s in t.layout.stages]
        chunks = [(sum(sizes[:i]), sizes[i])
                  for i in range(stage, len(sizes), t.pp)]
    elif t.vpp == 1:
        chunks = [(sum(counts[:stage]), counts[stage])]
    else:       # chunk v: c_s layers from v*L/vpp + c_0 + ... + c_(s-1)
        c = [n // t.vpp for n in counts]
        chunks = [(v * layers // t.vpp + sum(c[:stage]), c[stage])
                  for v in range(t.vpp)]
    ps = []
    for v, (first, n) in enumerate(chunks):
        p = Params(prefix)
        ps.append(p)
        if stage == 0 and v == 0:
            p.add("embedding.word_embeddings.weight",
                  [megatron_vocab_rows(m, t), h],
                  "model.embedding.weight" if m.gpt_oss else
                  "model.embed_tokens.weight")
        for l in range(n):
            g = first + l
            p.layers.append((l, g))
            pre, hf = f"decoder.layers.{l}.", f"model.layers.{g}."
            if g in m.linear_layers:
                megatron_gdn(p, m, tp, pre, hf)
            elif m.mla:
                p.add(pre + "input_layernorm.weight", [h],
                      hf + "input_layernorm.weight")
                kv_a = m.kv_lora_rank + m.qk_rope_head_dim
                q_head = m.qk_nope_head_dim + m.qk_rope_head_dim
                if m.q_lora_rank:
                    rows = [m.q_lora_rank, kv_a]
                    if mla_adjacent:        # one allocation, as a param buffer
                        buf = torch.empty([sum(rows), h], dtype=BF16)
                        q, kv = buf[:rows[0]], buf[rows[0]:]
                    else:
                        q = kv = None
                    fused = hf + "self_attn.fused_qkv_a_proj.weight"
                    p.add(pre + "self_attention.linear_q_down_proj.weight",
                          [rows[0], h], fused, tensor=q)
                    p.add(pre + "self_attention.linear_kv_down_proj.weight",
                          [rows[1], h], fused, tensor=kv)
                    p.add(pre + "self_attention.linear_q_up_proj."
                          "layer_norm_weight", [m.q_lora_rank],
                          hf + "self_attn.q_a_layernorm.weight")
                    p.add(pre + "self_attention.linear_q_up_proj.weight",
                          [m.heads * q_head // tp, m.q_lora_rank],
                          hf + "self_attn.q_b_proj.weight")
                p.add(pre + "self_attention.linear_kv_up_proj."
                      "layer_norm_weight",
                      [m.kv_lora_rank], hf + "self_attn.kv_a_layernorm.weight")
                p.add(pre + "self_attention.linear_kv_up_proj.weight",
                      [m.heads * (m.qk_nope_head_dim + m.v_head_dim) // tp,
                       m.kv_lora_rank], hf + "self_attn.kv_b_proj.weight")
                p.add(pre + "self_attention.linear_proj.weight",
                      [h, m.heads * m.v_head_dim // tp],
                      hf + "self_attn.o_proj.weight")
            else:
                at = "attn." if m.gpt_oss else "self_attn."   # vLLM's names
                p.add(pre + "self_attention.linear_qkv.layer_norm_weight", [h],
                      hf + "input_layernorm.weight")
                rows = (m.heads * (1 + m.attn_output_gate) + 2 * m.kv_heads) \
                    * m.head_dim
                p.add(pre + "self_attention.linear_qkv.weight",
                      [rows // tp, h],
                      hf + at + "qkv_proj.weight")
                if m.qkv_bias:
                    p.add(pre + "self_attention.linear_qkv.bias", [rows // tp],
                          hf + at + "qkv_proj.bias")
                if m.qk_norm:
                    p.add(pre + "self_attention.q_layernorm.weight",
                          [m.head_dim], hf + at + "q_norm.weight")
                    p.add(pre + "self_attention.k_layernorm.weight",
                          [m.head_dim], hf + at + "k_norm.weight")
                p.add(pre + "self_attention.linear_proj.weight",
                      [h, m.heads * m.head_dim // tp],
                      hf + at + "o_proj.weight")
                if m.o_bias:                # row-parallel: whole on each
                    p.add(pre + "self_attention.linear_proj.bias", [h],
                          hf + at + "o_proj.bias")
                if m.gpt_oss:   # the sinks: TEDotProductAttention's
                    p.add(pre + "self_attention.core_attention."
                          "softmax_offset", [m.heads // tp], hf + at + "sinks")
            if not m.is_moe(g):
                f = m.intermediate
                p.add(pre + "mlp.linear_fc1.layer_norm_weight", [h],
                      hf + "post_attention_layernorm.weight")
                p.add(pre + "mlp.linear_fc1.weight", [2 * f // tp, h],
                      hf + "mlp.gate_up_proj.weight")
                p.add(pre + "mlp.linear_fc2.weight", [h, f // tp],
                      hf + "mlp.down_proj.weight")
                continue
            moe = m.moe_prefix
            p.add(pre + "pre_mlp_layernorm.weight", [h],
                  hf + "post_attention_layernorm.weight")
            if m.gpt_oss:
                megatron_gpt_oss_moe(p, m, t, ep_i, pre, hf, grouped)
                continue
            p.add(pre + "mlp.router.weight", [m.experts, h],
                  hf + f"{moe}.gate.weight")
            if m.score_bias:
                p.add(pre + "mlp.router.expert_bias", [m.experts],
                      hf + "mlp.gate.e_score_correction_bias",
                      dtype=torch.float32,
                      buffer=True)
            if m.shared_experts:
                fs = m.shared_size()
                se = "shared_expert" if m.shared_gate else "shared_experts"
                p.add(pre + "mlp.shared_experts.linear_fc1.weight",
                      [2 * fs // tp, h], hf + f"mlp.{se}.gate_up_proj.weight")
                p.add(pre + "mlp.shared_experts.linear_fc2.weight",
                      [h, fs // tp], hf + f"mlp.{se}.down_proj.weight")
                if m.shared_gate:
                    p.add(pre + "mlp.shared_experts.gate_weight", [1, h],
                          hf + "mlp.shared_expert_gate.weight")
            n, f = m.experts // t.ep, m.moe_intermediate
            up, down = m.expert_names
            for j in range(n):
                e = ep_i * n + j                # MoELayer local_expert_indices
                fc1, fc2 = (
                    (f"mlp.experts.linear_fc1.weight{j}",
                     f"mlp.experts.linear_fc2.weight{j}") if grouped else
                    (f"mlp.experts.local_experts.{j}.linear_fc1.weight",
                     f"mlp.experts.local_experts.{j}.linear_fc2.weight"))
                p.add(pre + fc1, [2 * f // etp, h],
                      hf + f"{moe}.experts.{e}.{up}.weight")
                p.add(pre + fc2, [h, f // etp],
                      hf + f"{moe}.experts.{e}.{down}.weight")
        # With MTP layers, the final norm is in the last decoder layer's
        # chunk (TransformerBlock.has_final_layernorm_in_this_stage).
        mtp = t.layout is not None and "m" in "".join(t.layout.stages)
        if (first + n == layers and n) if mtp else \
                (stage == t.pp - 1 and v == len(chunks) - 1):
            p.add("decoder.final_layernorm.weight", [h], "model.norm.weight")
        if stage == t.pp - 1 and v == len(chunks) - 1:
            if not m.tie_embeddings:
                p.add("output_layer.weight", [megatron_vocab_rows(m, t), h],
                      "lm_head.weight")
    return ps[0] if len(ps) == 1 else Chunks(ps)


def megatron_gpt_oss_moe(p, m, t, ep_i, pre, hf, grouped):
    """gpt-oss's MoE as Megatron-Bridge's GPT-OSS bridge maps it: the
    router (its bias fp32, as TopKRouter allocates it; megatron-core 0.16.1
    then casts it to params_dtype, which test_runtime.py's Megatron-Core
    refit covers), and per local
    expert linear_fc1 [gate_r; up_r] with its bias, linear_fc2 with its
    bias (row-parallel: whole on every expert TP rank)."""
    h, f, etp = m.hidden, m.moe_intermediate, t.etp
    p.add(pre + "mlp.router.weight", [m.experts, h], hf + "mlp.router.weight")
    p.add(pre + "mlp.router.bias", [m.experts], hf + "mlp.router.bias",
          dtype=torch.float32)
    n = m.experts // t.ep
    for j in range(n):
        e = ep_i * n + j
        x = f"{hf}mlp.experts.{e}."
        for fc, shape, what in ((1, [2 * f // etp, h], "gate_up_proj.weight"),
                                (1, [2 * f // etp], "gate_up_proj.bias"),
                                (2, [h, f // etp], "down_proj.weight"),
                                (2, [h], "down_proj.bias")):
            kind = what.split(".")[1]
            name = (f"mlp.experts.linear_fc{fc}.{kind}{j}" if grouped else
                    f"mlp.experts.local_experts.{j}.linear_fc{fc}.{kind}")
            p.add(pre + name, shape, x + what)


def megatron_gdn(p, m, tp, pre, hf):
    """A GatedDeltaNet layer of Megatron-Core (TE spec): in_proj holds the
    rank's [q; k; v; z; b; a], the input norm fused into it, out_norm
    zero-centered (the checkpoint's weight minus 1)."""
    kd, vd = m.lin_k_heads * m.lin_k_dim, m.lin_v_heads * m.lin_v_dim
    nv, h, a = m.lin_v_heads, m.hidden, pre + "self_attention."
    p.add(a + "in_proj.layer_norm_weight", [h],
          hf + "input_layernorm.weight")
    qkvz = (2 * kd + 2 * vd) // tp
    w = p.add(a + "in_proj.weight", [qkvz + 2 * nv // tp, h],
              hf + "linear_attn.in_proj_qkvz.weight")
    p.stores[hf + "linear_attn.in_proj_ba.weight"] = [(w, ("at", qkvz * h))]
    p.add(a + "conv1d.weight", [(2 * kd + vd) // tp, 1, m.lin_conv],
          hf + "linear_attn.conv1d.weight")
    p.add(a + "dt_bias", [nv // tp], hf + "linear_attn.dt_bias")
    p.add(a + "A_log", [nv // tp], hf + "linear_attn.A_log")
    n = p.add(a + "out_norm.weight", [m.lin_v_dim], None)
    p.stores[hf + "linear_attn.norm.weight"] = [(n, "plus1")]
    p.add(a + "out_proj.weight", [h, vd // tp], hf + "linear_attn.out_proj.weight")


# --- vLLM -------------------------------------------------------------------

def vllm_params(m, infer, r, layers):
    """The parameters inference rank r (0-based, (((e*dp + d)*pp + s)*pcp
    + c)*tp + t) of a vLLM model holds: its pipeline stage's layers, named
    globally (PPMissingLayer elsewhere), the embedding on the first stage,
    the final norm and lm_head on the last (llama.py / qwen3_moe.py /
    deepseek_v2.py; QKVParallelLinear with
    KV heads replicated when tp > num_kv_heads; FusedMoE's w13_weight
    [E_local, 2*I/tp, H] and w2_weight [E_local, H, I/tp], E_local the EP
    rank's experts by the linear or round-robin expert map, ascending),
    plus buffers vLLM has that no layout tensor is (a quantization
    scale)."""
    i = infer if isinstance(infer, reshard.vllm.Infer) else \
        parse_infer(infer)
    tp, h = i.tp, m.hidden
    stage = r // (i.pcp * tp) % i.pp
    moe_r = (r // (i.pp * i.pcp * tp) % i.dp * i.pcp
             + r // tp % i.pcp) * tp + r % tp     # (d*pcp + c)*tp + t
    counts = pp_split(layers, i)
    first = sum(counts[:stage])
    p = Params()
    emb = "model.embedding.weight" if m.gpt_oss else \
        "model.embed_tokens.weight"         # gpt_oss.py's name
    if stage == 0 or (stage == i.pp - 1 and m.tie_embeddings):
        # (the last stage's too when lm_head ties to it)
        p.add(emb, [vllm_vocab_rows(m, i), h], emb)
    for g in range(first, first + counts[stage]):
        hf = f"model.layers.{g}."

        def same(name, shape, **kw):
            p.add(hf + name, shape, hf + name, **kw)
        same("input_layernorm.weight", [h])
        if g in m.linear_layers:
            # qwen3_next.py: contiguous rows of in_proj_qkvz / in_proj_ba,
            # conv1d's [q; k; v] parts, A_log in fp32.
            kd, vd = m.lin_k_heads * m.lin_k_dim, m.lin_v_heads * m.lin_v_dim
            nv = m.lin_v_heads
            same("linear_attn.in_proj_qkvz.weight", [(2 * kd + 2 * vd) // tp,
                                                     h])
            same("linear_attn.in_proj_ba.weight", [2 * nv // tp, h])
            same("linear_attn.conv1d.weight", [(2 * kd + vd) // tp, 1,
                                               m.lin_conv])
            same("linear_attn.dt_bias", [nv // tp])
            same("linear_attn.A_log", [nv // tp], dtype=torch.float32)
            same("linear_attn.norm.weight", [m.lin_v_dim])
            same("linear_attn.out_proj.weight", [h, vd // tp])
        elif m.mla:
            kv_a = m.kv_lora_rank + m.qk_rope_head_dim
            q_head = m.qk_nope_head_dim + m.qk_rope_head_dim
            same("self_attn.fused_qkv_a_proj.weight",
                 [m.q_lora_rank + kv_a, h])
            same("self_attn.q_a_layernorm.weight", [m.q_lora_rank])
            same("self_attn.q_b_proj.weight",
                 [m.heads * q_head // tp, m.q_lora_rank])
            same("self_attn.kv_a_layernorm.weight", [m.kv_lora_rank])
            same("self_attn.kv_b_proj.weight",
                 [m.heads * (m.qk_nope_head_dim + m.v_head_dim) // tp,
                  m.kv_lora_rank])
            same("self_attn.o_proj.weight", [h, m.heads * m.v_head_dim // tp])
        else:
            at = "attn." if m.gpt_oss else "self_attn."
            kv_local = max(1, m.kv_heads // tp)
            rows = (m.heads * (1 + m.attn_output_gate) // tp
                    + 2 * kv_local) * m.head_dim
            same(at + "qkv_proj.weight", [rows, h])
            if m.qkv_bias:
                same(at + "qkv_proj.bias", [rows])
            if m.qk_norm:
                same(at + "q_norm.weight", [m.head_dim])
                same(at + "k_norm.weight", [m.head_dim])
            same(at + "o_proj.weight", [h, m.heads * m.head_dim // tp])
            if m.o_bias:
                same(at + "o_proj.bias", [h])
            if m.gpt_oss:
                same("attn.sinks", [m.heads // tp])
        same("post_attention_layernorm.weight", [h])
        if not m.is_moe(g):
            f = m.intermediate
            same("mlp.gate_up_proj.weight", [2 * f // tp, h])
            same("mlp.down_proj.weight", [h, f // tp])
            continue
        moe = m.moe_prefix
        if m.gpt_oss:
            same("mlp.router.weight", [m.experts, h])
            same("mlp.router.bias", [m.experts])
        else:
            # glm4_moe.py builds the gate as an fp32 nn.Linear (Plan.run
            # widens the bf16 it receives).
            same(f"{moe}.gate.weight", [m.experts, h],
                 dtype=torch.float32 if m.model_type == "glm4_moe" else BF16)
        if m.score_bias:
            same("mlp.gate.e_score_correction_bias", [m.experts],
                 dtype=torch.float32)
        if m.shared_experts:
            fs = m.shared_size()
            stp = 1 if m.spmoe_replicates_shared() and \
                i.seq_parallel_moe else tp
            se = "shared_expert" if m.shared_gate else "shared_experts"
            same(f"mlp.{se}.gate_up_proj.weight", [2 * fs // stp, h])
            same(f"mlp.{se}.down_proj.weight", [h, fs // stp])
            if m.shared_gate:
                same("mlp.shared_expert_gate.weight", [1, h])
        if i.ep and (i.redundant or i.expert_map):
            # EPLB: physical experts placed linearly, as many a rank;
            # physical p is logical map[p] (EplbState's initial
            # physical_to_logical_map, or the given one of this MoE layer).
            phys = list(range(m.experts)) + [k % m.experts
                                             for k in range(i.redundant)]
            if i.expert_map and isinstance(i.expert_map[0][0], tuple):
                # Per stage: row k of this stage's map, its k-th MoE layer.
                k = sum(m.is_moe(x) for x in range(first, g))
                phys = list(i.expert_map[stage][k])
            elif i.expert_map:
                k = sum(m.is_moe(x) for x in range(g))
                phys = list(i.expert_map[k if len(i.expert_map) > 1 else 0])
            n, mtp = len(phys) // i.engine_size, 1
            mine = phys[moe_r * n:(moe_r + 1) * n]
        elif i.ep:    # EP rank: the rank within its engine
            size, e = i.engine_size, moe_r
            base, rem = divmod(m.experts, size)
            n, mtp = base + (e < rem), 1
            start = e * base + min(e, rem)
            mine = (range(e, m.experts, size) if i.placement == "round_robin"
                    else range(start, start + n))
        else:       # FusedMoE's TP group: the engine's dp*tp ranks
            mine, n, mtp = range(m.experts), m.experts, i.engine_size
        f = m.moe_intermediate
        up, down = m.expert_names
        p.moe_shard = moe_r % mtp       # its rows of each expert: FusedMoE TP
        w13 = p.add(hf + f"{moe}.experts.w13_weight", [n, 2 * f // mtp, h],
                    None)
        w2 = p.add(hf + f"{moe}.experts.w2_weight", [n, h, f // mtp], None)
        w13_bias = w2_bias = None
        if m.gpt_oss:
            # gpt_oss.py: w13's rows interleave gate and up (its loader
            # slices rows 2*start .. 2*end of the checkpoint's); w2_bias is
            # loaded on the first rank of FusedMoE's TP group only (zeros
            # elsewhere) unless under EP.
            w13_bias = p.add(hf + f"{moe}.experts.w13_bias",
                             [n, 2 * f // mtp], None)
            bias = p.add(hf + f"{moe}.experts.w2_bias", [n, h], None)
            if i.ep or moe_r == 0:
                w2_bias = bias
            else:
                p.unused_ok.append(hf + f"{moe}.experts.w2_bias")
        assert len(mine) == n
        copies = {}
        for j, x in enumerate(mine):
            # A second copy of an expert on this rank (EPLB) is the
            # layout's `<name>.copy1`.
            c = copies[x] = copies.get(x, -1) + 1
            more = f".copy{c}" if c else ""
            p.stores[f"{hf}{moe}.experts.{x}.{up}.weight{more}"] = [(w13, j)]
            p.stores[f"{hf}{moe}.experts.{x}.{down}.weight{more}"] = [(w2, j)]
            if m.gpt_oss:
                p.stores[f"{hf}{moe}.experts.{x}.{up}.bias{more}"] = \
                    [(w13_bias, j)]
                if w2_bias is not None:
                    p.stores[f"{hf}{moe}.experts.{x}.{down}.bias{more}"] = \
                        [(w2_bias, j)]
        p.add(hf + f"{moe}.experts.w13_weight_scale", [n], None,
              dtype=torch.float32)
    if stage == i.pp - 1:
        p.add("model.norm.weight", [h], "model.norm.weight")
        if not m.tie_embeddings:
            p.add("lm_head.weight", [vllm_vocab_rows(m, i), h],
                  "lm_head.weight")
    return p


# --- checks -----------------------------------------------------------------

def held(layout, side, rank):
    """{layout name: local shape} of the non-empty shards rank holds."""
    out = {}
    for t in layout.tensors:
        s = getattr(t, side).stored_shape(t.shape, rank)
        if s is not None and math.prod(s):
            out[t.name] = s
    return out


def bits(t):
    """The bytes of a tensor (NaN-proof equality)."""
    return t.contiguous().view(torch.uint8).flatten().tolist()


def same_storage(view, param, elems):
    """view is param's storage, `elems` elements in."""
    assert view.untyped_storage().data_ptr() == \
        param.untyped_storage().data_ptr()
    assert view.data_ptr() == param.data_ptr() + elems * param.element_size()
    assert view.is_contiguous()


def check_rank(layout, side, rank, got, fake, unused, unused_ok=()):
    """got maps exactly the tensors rank holds, each to a view of the
    parameter that stores it; only expected extras are unused."""
    want = held(layout, side, rank)
    assert set(got) == set(want), rank
    by_name = {t.name: t for t in layout.tensors}
    for name, shape in want.items():
        view = got[name]
        assert list(view.shape) == shape, name
        t = by_name[name]
        into = t.extra.get("fused_into")
        if into is not None:        # rows of the fused buffer
            ((param, _),) = fake.stores[into]
            rows = t.extra["fused_offset"][side]
            same_storage(view, param, rows * math.prod(shape[1:]))
            continue
        # An EPLB copy's source is the expert's own Megatron parameter.
        stores = fake.stores[t.extra.get("copy_of", name) if side == "src"
                             else name]
        if len(stores) == 2:        # MLA's two down projections
            (q, _), (kv, _) = stores
            assert bits(view) == bits(torch.cat([q, kv]))
            continue
        ((param, j),) = stores
        if param.dtype != view.dtype:   # an fp32 Megatron source, rounded
            assert side == "src" and view.data_ptr() != param.data_ptr()
            assert bits(view) == bits(param.to(view.dtype))
            continue
        if j == "plus1":            # Megatron's zero-centered out_norm
            assert view.data_ptr() != param.data_ptr()
            assert bits(view) == bits((param.float() + 1).to(param.dtype))
            continue
        if isinstance(j, tuple):    # ("at", elements into the parameter)
            same_storage(view, param, j[1])
            continue
        same_storage(view, param, (j or 0) * math.prod(shape))
    assert sorted(unused) == sorted(unused_ok)


def world(layout, side):
    return sorted({r for t in layout.tensors
                   for r in getattr(t, side).mesh.ranks})


def check_all(layout, m, train, infer, layers, src=True, **kw):
    """Every trainer (if src) and every inference rank of a layout."""
    for rank in world(layout, "src") if src else []:
        fake = megatron_params(m, train, rank, layers, **kw)
        for params in (fake.module(), fake.by_name()):
            unused = []
            got = reshard.megatron_tensors(layout, params, rank,
                                           unused=unused)
            check_rank(layout, "src", rank, got, fake, unused)
    first = layout.info["infer"]["ranks"][0]
    for rank in world(layout, "dst"):
        fake = vllm_params(m, infer, rank - first, layers)
        unused = []
        got = reshard.vllm_tensors(layout, fake.params, rank, unused=unused)
        scales = [n for n in fake.by_name() if n.endswith("_scale")]
        check_rank(layout, "dst", rank, got, fake, unused,
                   scales + fake.unused_ok)


def model_of(model, scale, train, infer):
    i = infer if isinstance(infer, reshard.vllm.Infer) else \
        parse_infer(infer)
    return scale_model(get_model(model), scale, (parse_train(train).tp, i.tp))


# --- dense, PP ---------------------------------------------------------------

@pytest.mark.parametrize("train,infer,tied", [
    ("tp=4,pp=2,vocab_pad=16", "tp=2,dp=2", False),     # both pad
    ("tp=2,pp=2,vocab_pad=32", "tp=2,pp=2", True),      # tied, vLLM pp
    ("tp=2,vpp=2,pp=2,vocab_pad=64", "tp=4", False)])   # model chunks
def test_padded_vocab_every_rank(train, infer, tied):
    # Megatron's padded vocab (vocab_pad=) and vLLM's multiple of 64: the
    # embedding and output layer are pieces, each a run of rows of the
    # padded buffer the frameworks hold.
    m = small(8, 4, 4, vocab_size=200, num_hidden_layers=4,
              tie_word_embeddings=tied)
    lay = build_layout(m, train, infer)
    assert any("fused_buffer_rows" in t.extra for t in lay.tensors)
    check_all(lay, m, train, infer, 4)


@pytest.mark.parametrize("infer", [
    "tp=1,dp=4,ep=1,redundant=4",           # vLLM's initial map
    "tp=2,dp=2,ep=1,redundant=4,engines=2",
    "map",                                   # a rebalanced map per layer
    "stages"])                               # one map per vLLM stage
def test_eplb_redundant_experts_every_rank(infer):
    m = small(8, 4, 4, num_hidden_layers=3, model_type="qwen3_moe",
              num_experts=8, moe_intermediate_size=8, mlp_only_layers=[0])
    if infer == "map":
        # Layer 1: 8 experts + 4 redundant over 4 ranks, 3 a rank, rank 0
        # holding expert 5 twice and rank 3 expert 7 twice (vLLM's
        # rebalancing packs copies by load alone); layer 2 permuted.
        rows = [[5, 5, 1, 2, 3, 4, 6, 7, 0, 7, 0, 7],
                [7, 6, 5, 4, 3, 2, 1, 0, 4, 5, 6, 7]]
        infer = reshard.vllm.Infer(dp=4, ep=True, redundant=4,
                                   expert_map=rows)
    elif infer == "stages":
        # vLLM pp=2: each stage's EplbState numbers its own MoE layers
        # (stage 0 holds layers 0-1, MoE layer 1; stage 1 layer 2); the
        # maps' extra rows are unused (DeepSeek sizes them by the model).
        import numpy as np
        maps = [np.array([[1, 0, 3, 2, 5, 4, 7, 6, 1, 1, 2, 3],
                          [0] * 12]),
                [list(range(8)) + [0, 0, 0, 0]]]
        infer = reshard.vllm.Infer(dp=4, pp=2, ep=True, redundant=4,
                                   expert_map=maps)
    lay = build_layout(m, "tp=2,ep=2,dp=2", infer)
    assert lay.info["infer"]["eplb"]["redundant"] == 4
    check_all(lay, m, "tp=2,ep=2,dp=2", infer, 3)


def test_eplb_errors():
    m = small(8, 4, 4, num_hidden_layers=2, model_type="qwen3_moe",
              num_experts=8, moe_intermediate_size=8, mlp_only_layers=[0])
    cases = [
        ("tp=1,dp=4,redundant=4", "need expert parallel: give ep=1"),
        ("tp=1,dp=4,ep=1,redundant=2", "10 physical experts % ep size 4"),
        ("tp=1,dp=4,ep=1,redundant=4,placement=round_robin",
         "vLLM falls back to linear expert placement: drop placement="),
    ]
    for spec, why in cases:
        with pytest.raises(ReshardError, match=why):
            build_layout(m, "tp=2,ep=2,dp=2", spec)
    Infer = reshard.vllm.Infer
    for rows, why in [
            ([[0] * 12], "logical expert 1 has no physical copy"),
            ([list(range(8)) + [0, 1, 2, 9]], "logical expert 9 is not in"),
            ([list(range(8))], "row 0 has 8 physical experts, not 8 \\+ "
                               "redundant 4 = 12"),
            ([list(range(8)) + [0, 1, 2, 3]] * 2, "has 2 rows: give one, or "
                                                  "one per MoE layer \\(1\\)")]:
        with pytest.raises(ReshardError, match=why):
            build_layout(m, "tp=2,ep=2,dp=2",
                         Infer(dp=4, ep=True, redundant=4, expert_map=rows))
    with pytest.raises(ReshardError, match="expert_map must be EplbState"):
        Infer(dp=4, ep=True, expert_map=[[0, 1.5]])
    with pytest.raises(ReshardError, match=r"row 0 has 12 physical .* "
                                           r"= 8 \(give redundant=4\)"):
        build_layout(m, "tp=2,ep=2,dp=2", Infer(
            dp=4, ep=True, expert_map=[list(range(8)) + [0, 1, 2, 3]]))
    with pytest.raises(ReshardError, match="2 per-stage maps for pp=1"):
        build_layout(m, "tp=2,ep=2,dp=2", Infer(
            dp=4, ep=True, redundant=4, expert_map=[[list(range(12))]] * 2))
    # (Stage 0 holds the dense layer 0: its map is not read.)
    with pytest.raises(ReshardError, match="stage 1 row 0: logical expert "
                                           "9 is not in"):
        build_layout(m, "tp=2,ep=2,dp=2", Infer(
            dp=2, pp=2, ep=True, redundant=4,
            expert_map=[[[0] * 12], [list(range(8)) + [9] * 4]]))
    with pytest.raises(ReshardError, match="EPLB needs tp or dp above 1"):
        build_layout(m, "tp=2,ep=2,dp=2", "tp=1,pcp=2,ep=1,redundant=2")
    with pytest.raises(ReshardError, match="redundant must be >= 0"):
        parse_infer("tp=2,ep=1,redundant=-1")
    # A flat list is one row (build_initial_global_physical_to_logical_map
    # returns one).
    assert Infer(dp=4, ep=True, expert_map=list(range(8))).expert_map == \
        (tuple(range(8)),)
    with pytest.raises(ReshardError, match="no routed experts"):
        build_layout(small(8, 4, 4), "tp=2", "tp=1,dp=2,ep=1,redundant=2")


def test_a_padded_vocab_the_layout_does_not_say_is_named():
    m = small(8, 4, 4, vocab_size=200, num_hidden_layers=1)
    lay = build_layout(m, "tp=4", "tp=2")          # Megatron unpadded
    with pytest.raises(ReshardError, match=r"has shape \[64, 16\], but "
                       r"the fused buffer rank 0 holds of model.embed_tokens"
                       r".weight is \[50, 16\] \(other vocab rows: a "
                       r"padded vocab"):
        reshard.megatron_tensors(lay, megatron_params(
            m, "tp=4,vocab_pad=16", 0, 1).module(), 0)


def test_padding_only_ranks_leave_their_vocab_unused():
    # 100 rows padded to 256 over tp=4: ranks 2 and 3 hold only padding.
    m = small(8, 4, 4, vocab_size=100, num_hidden_layers=1)
    train, infer = "tp=4,vocab_pad=64", "tp=2"
    lay = build_layout(m, train, infer)
    for rank in range(4):
        unused = []
        got = reshard.megatron_tensors(
            lay, megatron_params(m, train, rank, 1).module(), rank,
            unused=unused)
        assert set(got) == set(held(lay, "src", rank))
        pad = ["embedding.word_embeddings.weight", "output_layer.weight"]
        assert sorted(unused) == (pad if rank >= 2 else [])



@pytest.mark.parametrize("train", ["tp=2,pp=2,dp=2", "tp=1,pp=3,stages=1:2:1"])
def test_dense_model_every_rank(train):
    m = small(8, 4, 4, bias=True, num_hidden_layers=4)
    infer = "tp=2,dp=2"
    lay = build_layout(m, train, infer)
    assert not any("part" in t.name for t in lay.tensors)
    check_all(lay, m, train, infer, 4)


@pytest.mark.parametrize("case", ["dense", "first-last", "deepseek-v3"])
def test_virtual_pipeline_model_chunks(case):
    # vpp=2: each stage holds two model chunks, each numbering its layers
    # from 0; megatron_tensors takes Megatron's list of chunks.
    if case == "first-last":    # chunks of 1, 2, 1 layers: 0|1-2|3|4|5-6|7
        m = small(8, 4, 4, num_hidden_layers=8)
        train, infer = "tp=1,pp=3,vpp=2,first=2,last=2", "tp=2"
        lay = build_layout(m, train, infer)
        check_all(lay, m, train, infer, 8)
        got = reshard.megatron_tensors(lay, megatron_params(
            m, train, 1, 8).module(), 1)
        assert sorted({int(n.split(".")[2]) for n in got
                       if n.startswith("model.layers.")}) == [1, 2, 5, 6]
        return
    if case == "dense":
        m = small(8, 4, 4, num_hidden_layers=8)
        train, infer, layers = "tp=2,pp=2,vpp=2,dp=1", "tp=2", 8
        lay = build_layout(m, train, infer)
    else:       # dense layers 0-2, MoE 3-7; experts in both chunks
        train, infer, layers = "tp=2,pp=2,vpp=2,ep=2,dp=1", "tp=2,ep=1", 8
        lay = build_layout("deepseek-v3", train, infer, layers=8,
                           scale_down=64)
        m = model_of("deepseek-v3", 64, train, infer)
    check_all(lay, m, train, infer, layers)
    # Stage 1 holds layers 2-3 (chunk 0) and 6-7 (chunk 1).
    fake = megatron_params(m, train, 2, layers)
    got = reshard.megatron_tensors(lay, fake.module(), 2)
    p0, p1 = fake.by_name()
    name = "self_attn.o_proj.weight"
    assert got[f"model.layers.3.{name}"].data_ptr() == \
        p0["decoder.layers.1.self_attention.linear_proj.weight"].data_ptr()
    assert got[f"model.layers.6.{name}"].data_ptr() == \
        p1["decoder.layers.0.self_attention.linear_proj.weight"].data_ptr()
    assert got["lm_head.weight"].data_ptr() == \
        p1["output_layer.weight"].data_ptr()


def test_virtual_pipeline_needs_the_chunks():
    m = small(8, 4, 4, num_hidden_layers=8)
    train = "tp=1,pp=2,vpp=2"
    lay = build_layout(m, train, "tp=1")
    fake = megatron_params(m, train, 0, 8)
    c0, c1 = fake.by_name()
    with pytest.raises(ReshardError, match=r"gives this rank 2 runs of "
                       r"layers \(0-1, 4-5\), Megatron's virtual pipeline "
                       r"model chunks: pass the list of model chunks"):
        reshard.megatron_tensors(lay, {**c0}, 0)
    with pytest.raises(ReshardError, match=r"3 model chunks given, but the "
                       r"layout gives this rank 2 runs of layers "
                       r"\(0-1, 4-5\): give one chunk per run"):
        reshard.megatron_tensors(lay, [c0, c1, {}], 0)
    with pytest.raises(ReshardError, match=r"1 model chunks given, but the "
                       r"layout gives this rank 2 runs"):
        reshard.megatron_tensors(lay, [c0], 0)
    with pytest.raises(ReshardError, match="layer_offset= applies to one"):
        reshard.megatron_tensors(lay, [c0, c1], 0, layer_offset=0)
    with pytest.raises(ReshardError, match="pass the list of model chunks"):
        reshard.megatron_tensors(lay, {**c0}, 0, layer_offset=0)
    with pytest.raises(ReshardError, match="mixing model chunks"):
        reshard.megatron_tensors(lay, [c0, ("x", c1)], 0)
    # A parameter of chunk 1 no layout tensor uses is named by its chunk.
    c1["decoder.layers.0.extra.weight"] = torch.empty(2)
    unused = []
    reshard.megatron_tensors(lay, [c0, c1], 0, unused=unused)
    assert unused == ["model[1]: decoder.layers.0.extra.weight"]
    # The message names the chunk of a missing parameter.
    del c1["decoder.layers.1.self_attention.linear_proj.weight"]
    with pytest.raises(ReshardError, match=r"layer 5 is layer 1 of model "
                                           r"chunk 1"):
        reshard.megatron_tensors(lay, [c0, c1], 0)


def check_layout_ranks(lay, m, train, infer, layers):
    """check_all for a pipeline layout, whose chunks need not be runs of
    the layers a rank holds: the modules say their layers' numbers, a
    list of dicts takes layer_offset per chunk or, without it, each
    chunk's layers from the layout's scenario.train.chunk_layers."""
    t = parse_train(train)
    firsts = [[c[0] if c else 0 for c in chunks]
              for chunks in t.layout.chunk_layers()]
    for rank in world(lay, "src"):
        fake = megatron_params(m, train, rank, layers)
        offsets = firsts[rank // t.stage_size]
        for params, kw in ((fake.module(), {}),
                           (fake.by_name(), dict(layer_offset=offsets)),
                           (fake.by_name(), {})):
            unused = []
            got = reshard.megatron_tensors(lay, params, rank, unused=unused,
                                           **kw)
            check_rank(lay, "src", rank, got, fake, unused)
    check_all(lay, m, train, infer, layers, src=False)


@pytest.mark.parametrize("train", [
    # Stage 0's chunks hold layers 0-1 and 2-4 (adjacent: one run); stage
    # 1's first chunk is empty.
    "tp=2,pp=2,layout=Ett||ttt|tttL",
    # With MTP the final norm goes with layer 7 (stage 0's chunk 1), the
    # output layer stays on stage 1.
    "tp=1,pp=2,dp=2,layout=Ett|ttt|ttt|mL",
    # Bridge's list form.
    [["embedding", "decoder"], ["decoder"] * 3, ["decoder"] * 4 + ["loss"]]])
def test_pipeline_layout_every_rank(train):
    m = small(8, 4, 4, num_hidden_layers=8)
    if isinstance(train, list):
        train = parse_train("tp=2,pp=3,dp=1").__class__(
            tp=2, pp=3, layout=train)
        spec = "tp=2,pp=3,layout=Et|ttt|ttttL"
        assert train == parse_train(spec)
        train = spec
    lay = build_layout(m, train, "tp=2")
    check_layout_ranks(lay, m, train, "tp=2", 8)
    norm = next(x for x in lay.tensors if x.name == "model.norm.weight")
    head = next(x for x in lay.tensors if x.name == "lm_head.weight")
    if "mL" in train:
        assert norm.src.mesh.name == "train_pp0"
        assert head.src.mesh.name == "train_pp1"


def test_random_pipeline_layouts_every_rank():
    """Random layouts (empty stages, adjacent chunks, MTP), tp and dp:
    every rank's views through the modules and through dicts with
    layer_offset."""
    import random
    rng = random.Random(5)
    for _ in range(40):
        pp, vpp = rng.randint(1, 3), rng.randint(1, 3)
        if pp == 1:
            vpp = 1
        stages = ["t" * rng.choice([0, 1, 2, 3]) for _ in range(pp * vpp)]
        layers = sum(map(len, stages))
        if not layers:
            stages[0], layers = "t", 1
        stages[0] = "E" + stages[0]
        stages[-1] += "mL" if rng.random() < 0.3 else "L"
        tp, dp = rng.choice([1, 2]), rng.choice([1, 2])
        train = f"tp={tp},dp={dp},pp={pp},layout={'|'.join(stages)}"
        infer = f"tp={rng.choice([1, 2])}"
        m = small(8, 4, 4, num_hidden_layers=layers)
        lay = build_layout(m, train, infer)
        check_layout_ranks(lay, m, train, infer, layers)


def test_pipeline_layout_with_experts():
    train, infer = "tp=2,pp=2,ep=2,layout=Et|ttt|tt|ttL", "tp=2,ep=1"
    lay = build_layout("deepseek-v3", train, infer, layers=8, scale_down=64)
    m = model_of("deepseek-v3", 64, train, infer)
    check_layout_ranks(lay, m, train, infer, 8)


def test_pipeline_layout_chunks_need_their_numbers(tmp_path):
    m = small(8, 4, 4, num_hidden_layers=8)
    train = "tp=1,pp=2,layout=Ett||ttt|tttL"
    lay = build_layout(m, train, "tp=1")
    fake = megatron_params(m, train, 0, 8)      # layers 0-1 and 2-4
    c0, c1 = fake.by_name()
    # The preset's layout records each chunk's layers: dicts need nothing
    # more, from the Layout, its dict or its file.
    path = tmp_path / "layout.json"
    lay.write_json(str(path))
    for given in (lay, lay.to_dict(), str(path)):
        got = reshard.megatron_tensors(given, [c0, c1], 0)
        assert got["model.layers.2.self_attn.o_proj.weight"].data_ptr() == \
            c1["decoder.layers.0.self_attention.linear_proj.weight"
               ].data_ptr()
    # Without that record or numbers, the chunks are read as runs:
    # refused, not guessed.
    bare = json.loads(json.dumps(lay.to_dict()))
    del bare["scenario"]["train"]["chunk_layers"]
    with pytest.raises(ReshardError, match=r"2 model chunks given, but the "
                       r"layout gives this rank 1 runs of layers \(0-4\)"):
        reshard.megatron_tensors(bare, [c0, c1], 0)
    got = reshard.megatron_tensors(lay, [c0, c1], 0, layer_offset=[0, 2])
    assert got["model.layers.2.self_attn.o_proj.weight"].data_ptr() == \
        c1["decoder.layers.0.self_attention.linear_proj.weight"].data_ptr()
    with pytest.raises(ReshardError, match=r"layer_offset=\[0\]: one offset "
                       r"per model chunk, with the list of chunks \(2\)"):
        reshard.megatron_tensors(lay, [c0, c1], 0, layer_offset=[0])
    with pytest.raises(ReshardError, match="one model given"):
        reshard.megatron_tensors(lay, c0, 0, layer_offset=[0, 2])
    with pytest.raises(ReshardError, match="give integers >= 0"):
        reshard.megatron_tensors(lay, [c0, c1], 0, layer_offset=[0, -2])
    with pytest.raises(ReshardError, match="give an integer >= 0"):
        reshard.megatron_tensors(lay, c0, 0, layer_offset="0")
    # Wrong offsets: the layers the layout gives the rank are missing.
    with pytest.raises(ReshardError, match=r"layer 2 is in none of this "
                       r"rank's model chunks \(chunk 0: 0-1; chunk 1: 3-5\)"):
        reshard.megatron_tensors(lay, [c0, c1], 0, layer_offset=[0, 3])
    # Offsets that do not go up would swap the chunks' weights (here of
    # the same shapes): refused.
    with pytest.raises(ReshardError, match=r"chunk 1 starts at layer 0, "
                       r"inside or before the layers of the chunks before "
                       r"it \(which end at 3\)"):
        reshard.megatron_tensors(lay, [c0, c1], 0, layer_offset=[2, 0])
    np = pytest.importorskip("numpy")
    got = reshard.megatron_tensors(lay, [c0, c1], 0,
                                   layer_offset=[np.int64(0), np.int64(2)])
    assert "model.layers.4.self_attn.o_proj.weight" in got
    # A module that says its layers' numbers needs nothing more.
    got = reshard.megatron_tensors(lay, fake.module(), 0)
    assert len(got) == len(held(lay, "src", 0))


def test_pipeline_stage_numbers_its_layers_from_zero():
    m = small(8, 4, 4, num_hidden_layers=4)
    lay = build_layout(m, "tp=1,pp=3,stages=1:2:1", "tp=1")
    fake = megatron_params(m, "tp=1,pp=3,stages=1:2:1", 2, 4)   # stage 2
    got = reshard.megatron_tensors(lay, fake.params, 2)
    p = fake.by_name()
    view = got["model.layers.3.self_attn.qkv_proj.weight"]
    assert view.data_ptr() == \
        p["decoder.layers.0.self_attention.linear_qkv.weight"].data_ptr()
    assert "lm_head.weight" in got and "model.embed_tokens.weight" not in got
    # DDP / Float16Module prefixes are stripped.
    wrapped = megatron_params(m, "tp=1,pp=3,stages=1:2:1", 2, 4,
                              prefix="module.module.")
    unused = []
    got = reshard.megatron_tensors(lay, wrapped.module(), 2, unused=unused)
    check_rank(lay, "src", 2, got, wrapped, unused)


# --- MoE with expert parallel on both sides ---------------------------------

@pytest.mark.parametrize("grouped", [True, False],
                         ids=["TEGroupedMLP", "SequentialMLP"])
def test_qwen3_moe_expert_parallel(grouped):
    train, infer = "tp=2,pp=2,ep=2,dp=2", "tp=4,dp=2,ep=1"
    lay = build_layout("qwen3-235b-a22b", train, infer, layers=2,
                       scale_down=64)
    m = model_of("qwen3-235b-a22b", 64, train, infer)
    check_all(lay, m, train, infer, 2, grouped=grouped)


def test_vllm_pipeline_stages_with_tied_embeddings():
    # The last stage holds the embedding too, as lm_head's weight.
    m = small(8, 4, 4, num_hidden_layers=4, tie_word_embeddings=True)
    train, infer = "tp=2,pp=2", "tp=2,pp=2,dp=2"
    lay = build_layout(m, train, infer)
    check_all(lay, m, train, infer, 4)


@pytest.mark.parametrize("infer,layers", [
    ("tp=2,dp=2,pcp=2,ep=1", 2), ("tp=2,pcp=2", 2),
    ("tp=8,pp=2", 3), ("tp=2,dp=2,pp=2,ep=1", 3)])
def test_qwen3_moe_vllm_pcp_and_pp(infer, layers):
    # vLLM ranks DP x PP x PCP x TP. PCP: the EP rank, or the flattened MoE
    # TP rank, of engine rank r is r itself. PP: a stage's ranks hold its
    # layers under their global names (KV-replicated qkv pieces at tp=8;
    # with EP, the stage's EP group).
    train = "tp=2,pp=2,ep=2,dp=2"
    lay = build_layout("qwen3-235b-a22b", train, infer, layers=layers,
                       scale_down=64)
    m = model_of("qwen3-235b-a22b", 64, train, infer)
    check_all(lay, m, train, infer, layers)


def test_expert_views_are_ep_local():
    train, infer = "tp=2,pp=2,ep=2,dp=2", "tp=4,dp=2,ep=1"
    lay = build_layout("qwen3-235b-a22b", train, infer, layers=2,
                       scale_down=64)
    m = model_of("qwen3-235b-a22b", 64, train, infer)
    # Megatron rank 5: stage 1 (ranks 4..7), expert rank etp + etp*(ep +
    # ep*edp) = 1: EP rank 1, experts 64..127 of layer 1 as local experts
    # 0..63 of its layer 0.
    fake = megatron_params(m, train, 5, 2)
    got = reshard.megatron_tensors(lay, fake.params, 5)
    p = fake.by_name()
    assert "model.layers.1.mlp.experts.64.gate_up_proj.weight" in got
    assert got["model.layers.1.mlp.experts.70.down_proj.weight"].data_ptr() \
        == p["decoder.layers.0.mlp.experts.linear_fc2.weight6"].data_ptr()
    assert not any(".experts.63." in n for n in got)
    # vLLM rank 8 + 5: EP rank 5 of 8 holds experts 80..95: w13_weight[3]
    # is expert 83.
    first = lay.info["infer"]["ranks"][0]
    fake = vllm_params(m, infer, 5, 2)
    got = reshard.vllm_tensors(lay, fake.params, first + 5)
    w13 = fake.by_name()["model.layers.0.mlp.experts.w13_weight"]
    view = got["model.layers.0.mlp.experts.83.gate_up_proj.weight"]
    assert view.data_ptr() == w13[3].data_ptr()
    assert sorted(int(n.split(".")[5]) for n in got
                  if n.startswith("model.layers.0.mlp.experts.")
                  and n.endswith("down_proj.weight")) == list(range(80, 96))


# --- KV-replicated qkv pieces -----------------------------------------------

@pytest.mark.parametrize("case", ["dense", "qwen3-moe"])
def test_kv_replicated_pieces(case):
    if case == "dense":
        m = small(8, 2, 4, bias=True, num_hidden_layers=2)
        train, infer, layers = "tp=4,dp=2", "tp=8,dp=2", 2
        lay = build_layout(m, train, infer)
    else:               # experts tensor-parallel over vLLM's 8 ranks
        train, infer, layers = "tp=2,pp=1,dp=1", "tp=8", 1
        lay = build_layout("qwen3-235b-a22b", train, infer, layers=1,
                           scale_down=64)
        m = model_of("qwen3-235b-a22b", 64, train, infer)
    pieces = [t for t in lay.tensors if "fused_into" in t.extra]
    assert pieces and not any(t.name.endswith("qkv_proj.weight")
                              for t in lay.tensors)
    check_all(lay, m, train, infer, layers)
    # Each rank's pieces tile its fused buffer, on both sides.
    for side in ("src", "dst"):
        for rank in world(lay, side):
            spans = sorted((t.extra["fused_offset"][side], t.shape[0])
                           for t in pieces
                           if t.extra["fused_into"].endswith("weight")
                           and t.name.startswith("model.layers.0.")
                           and getattr(t, side).local_shape(t.shape, rank))
            assert spans[0][0] == 0
            assert all(a + n == b for (a, n), (b, _) in zip(spans,
                                                            spans[1:]))


# --- GLM-4.5: q/k/v biases, q/k norms, shared experts, fp32 vLLM gate ------

@pytest.mark.parametrize("train,infer", [
    ("tp=2,ep=2,dp=2", "tp=4"),             # experts whole, vLLM TP
    ("tp=2,ep=4,dp=2", "tp=2,dp=2"),        # FusedMoE's TP group: 4 ranks
    ("tp=4,ep=2", "tp=2,dp=2,ep=1"),        # vLLM EP: w2_bias everywhere
    ("tp=2,pp=2,ep=2", "tp=1,dp=4,ep=1")])  # vLLM EP over 4 (no EPLB)
def test_gpt_oss_every_rank(tmp_path, train, infer):
    """gpt-oss: vLLM's names (model.embedding, attn., mlp.router), sinks,
    the router's fp32 bias on Megatron (a rounded copy), each expert's
    [2, f, h] gate_up as a view of linear_fc1.weight{j} (2-D [gate_r;
    up_r]) and of w13_weight[j] (interleaved: the buffer [f/tp, 2, h]),
    biases likewise, w2_bias on the first rank of FusedMoE's TP group."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GPT_OSS))
    m = model_of(str(path), 1, train, infer)
    lay = build_layout(str(path), train, infer, colocated=True)
    check_all(lay, m, train, infer, m.layers)


def test_gpt_oss_refuses_expert_tp_on_megatron(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GPT_OSS))
    with pytest.raises(ReshardError, match="experts have biases, which "
                                           "Megatron-Core supports only "
                                           "with etp=1"):
        build_layout(str(path), "tp=2,dp=2,ep=2,etp=2", "tp=4")
    with pytest.raises(ReshardError, match="w13=up_gate: gpt-oss's w13 "
                                           "interleaves"):
        build_layout(str(path), "tp=2,ep=2", "tp=2,w13=up_gate")


@pytest.mark.parametrize("infer,msg", [
    # OAIAttention divides the KV heads by tp: no replicas (4 KV heads).
    ("tp=8", r"gpt-oss's attention divides its num_kv_heads 4 by tp 8 "
             r"\(gpt_oss.py has no KV-head replicas\): tp must be at most 4"),
    # Its loader: num_experts // ep_size experts an EP rank (8 over 3).
    ("tp=1,dp=3,ep=1", r"gpt-oss's loader gives each EP rank num_experts "
                       r"// ep_size experts: 8 experts % ep size 3"),
    ("tp=2,dp=2,ep=1,redundant=4", r"gpt-oss has no EPLB"),
])
def test_gpt_oss_refuses_what_vllm_cannot_serve(tmp_path, infer, msg):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GPT_OSS))
    with pytest.raises(ReshardError, match=msg):
        build_layout(str(path), "tp=2,ep=2", infer)


def test_gpt_oss_fp8_leaves_the_interleaved_gate_up(tmp_path):
    """fp8=block quantizes gpt-oss's 2-D weights where blocks fit, and
    counts each expert's [2, f, h] gate_up as left at bf16 (no [2, f, h]
    block states vLLM's grid over interleaved rows)."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(GPT_OSS, hidden_size=256,
                                    intermediate_size=256, head_dim=32)))
    lay = build_layout(str(path), "tp=1,ep=1", "tp=1,fp8=block", layers=1)
    glu = [t for t in lay.tensors if t.name.endswith("gate_up_proj.weight")]
    assert len(glu) == 8 and all(t.dst.quant is None for t in glu)
    fp8 = lay.info["infer"]["fp8"]
    assert fp8["left"] >= 8 and fp8["quantized"] > 0
    assert any(t.dst.quant for t in lay.tensors
               if t.name.endswith("down_proj.weight"))


def test_megatron_fp32_router_parameters(tmp_path):
    """Where Megatron holds a router parameter in fp32 and the layout moves
    bf16: a rounded copy as a source; as a destination the parameter
    itself, which Plan.run widens into."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GPT_OSS))
    m = model_of(str(path), 1, "tp=1,ep=1", "tp=1")
    lay = build_layout(str(path), "tp=1,ep=1", "tp=1", layers=1,
                       colocated=True)
    fake = megatron_params(m, "tp=1,ep=1", 0, 1)
    name = "model.layers.0.mlp.router.bias"
    ((param, _),) = fake.stores[name]
    assert param.dtype == torch.float32
    src = reshard.megatron_tensors(lay, fake.module(), 0)[name]
    assert src.dtype == BF16 and bits(src) == bits(param.to(BF16))
    # Megatron as the destination (a reverse refit at tp=1, where both
    # sides' shards have Megatron's shapes): the fp32 parameter itself.
    back = reshard.megatron_tensors(lay, fake.module(), 0, side="dst")
    assert back[name].dtype == torch.float32
    same_storage(back[name], param, 0)


def test_glm45_every_rank():
    # vLLM's sequence-parallel MoE (tp and dp > 1 with ep): glm4_moe.py,
    # unlike deepseek_v2.py, keeps the shared experts tensor-parallel.
    train, infer = "tp=2,pp=2,ep=4,dp=2", "tp=2,dp=2,ep=1"
    lay = build_layout("glm-4.5", train, infer, layers=4, scale_down=64)
    m = model_of("glm-4.5", 64, train, infer)
    assert m.qkv_bias and m.qk_norm and not m.o_bias and m.score_bias
    assert m.dense_layers == (0, 1, 2) and m.shared_experts == 1
    assert not lay.info["infer"]["shared_experts_replicated"]
    check_all(lay, m, train, infer, 4)
    first = lay.info["infer"]["ranks"][0]
    got = reshard.vllm_tensors(lay, vllm_params(m, infer, 1, 4).params,
                               first + 1)
    assert got["model.layers.3.mlp.gate.weight"].dtype == torch.float32
    assert list(got["model.layers.3.mlp.shared_experts.down_proj.weight"]
                .shape) == [m.hidden, m.moe_intermediate // 2]


# --- Qwen3-Next: Gated DeltaNet, gated attention, a gated shared expert -----

@pytest.mark.parametrize("train,infer", [
    ("tp=2,pp=2,ep=2", "tp=2,dp=2,ep=1"),
    ("tp=4,ep=2", "tp=4"),               # KV heads replicated on vLLM
    ("tp=1,pp=2,ep=2,dp=2", "tp=2,pp=2")])
def test_qwen3_next_every_rank(tmp_path, train, infer):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY_QWEN3_NEXT))
    lay = build_layout(str(path), train, infer)
    m = model_of(str(path), 1, train, infer)
    assert m.linear_layers == (0, 2) and m.attn_output_gate
    check_all(lay, m, train, infer, 4)
    first = lay.info["infer"]["ranks"][0]
    got = reshard.vllm_tensors(lay, vllm_params(m, infer, 0, 4).params,
                               first)
    # vLLM's fp32 A_log is the view of a bf16 tensor (Plan.run widens).
    a_log = "model.layers.0.linear_attn.A_log"
    assert next(t.dtype for t in lay.tensors if t.name == a_log) == "bf16"
    assert got[a_log].dtype == torch.float32


def test_qwen3_5_every_rank_under_its_prefixes(tmp_path):
    # Qwen3.5 (a VLM): vLLM names its text model language_model.model.*,
    # Megatron-Bridge's Qwen3VLModel language_model.decoder.*; prefix=
    # strips them, and the vision tower's parameters are left unused.
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY_QWEN3_5))
    train, infer = "tp=2,pp=2,ep=2", "tp=2,dp=2,ep=1"
    lay = build_layout(str(path), train, infer)
    m = model_of(str(path), 1, train, infer)
    assert m.gdn_flat and m.linear_layers == (0, 2) and m.shared_gate
    check_all(lay, m, train, infer, 4)
    fake = megatron_params(m, train, 0, 4, prefix="language_model.")
    fake.params.append(("vision_model.patch_embed.weight", torch.empty(4)))
    unused = []
    got = reshard.megatron_tensors(lay, fake.module(), 0, unused=unused,
                                   prefix="language_model.")
    check_rank(lay, "src", 0, got, fake, unused,
               ["vision_model.patch_embed.weight"])
    first = lay.info["infer"]["ranks"][0]
    fake = vllm_params(m, infer, 0, 4)
    params = [("language_model." + n, t) for n, t in fake.params]
    unused = []
    got = reshard.vllm_tensors(lay, params + [("visual.x", torch.empty(4))],
                               first, prefix="language_model.",
                               unused=unused)
    scales = ["language_model." + n for n in fake.by_name()
              if n.endswith("_scale")]
    check_rank(lay, "dst", first, got, fake, unused, ["visual.x"] + scales)


def test_qwen3_5_dense_every_rank(tmp_path):
    # Gated DeltaNet layers beside dense MLPs (Qwen3.5's dense models).
    text = dict(TINY_QWEN3_5["text_config"], model_type="qwen3_5_text")
    for k in ("num_experts", "moe_intermediate_size",
              "shared_expert_intermediate_size"):
        del text[k]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(model_type="qwen3_5", text_config=text)))
    train, infer = "tp=2,pp=2", "tp=4"
    lay = build_layout(str(path), train, infer)
    m = model_of(str(path), 1, train, infer)
    assert m.experts == 0 and m.linear_layers == (0, 2)
    check_all(lay, m, train, infer, 4)


def test_qwen3_next_needs_zero_centered_megatron_norms(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY_QWEN3_NEXT))
    lay = build_layout(str(path), "tp=2", "tp=2")
    m = model_of(str(path), 1, "tp=2", "tp=2")
    model = megatron_params(m, "tp=2", 0, 4).module()
    model.config = types.SimpleNamespace(layernorm_zero_centered_gamma=True)
    assert reshard.megatron_tensors(lay, model, 0)
    model.config.layernorm_zero_centered_gamma = False
    with pytest.raises(ReshardError, match="layernorm_zero_centered_gamma="
                                           "False, but Qwen3-Next's norms"):
        reshard.megatron_tensors(lay, model, 0)
    with pytest.raises(ReshardError, match="off by 1"):
        reshard.megatron_tensors(lay, [model], 0)


def test_qwen3_next_out_norm_cannot_be_received_by_megatron(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY_QWEN3_NEXT))
    train, infer = "tp=2", "tp=2"
    lay = build_layout(str(path), train, infer).to_dict()
    for t in lay["tensors"]:
        t["src"], t["dst"] = t["dst"], t["src"]
    m = model_of(str(path), 1, train, infer)
    fake = megatron_params(m, train, 0, 4)
    with pytest.raises(ReshardError, match="out_norm.weight' holds the "
                                           "checkpoint's weight minus 1"):
        reshard.megatron_tensors(lay, fake.module(), 0, side="dst")


# --- MLA (DeepSeek-V3): shared experts, expert bias, fused_qkv_a_proj --------

@pytest.fixture(scope="module")
def dsv3():
    train, infer = "tp=2,pp=2,ep=4,dp=2", "tp=2,dp=2,ep=1"
    lay = build_layout("deepseek-v3", train, infer, layers=4, scale_down=64)
    return lay, model_of("deepseek-v3", 64, train, infer), train, infer


def test_deepseek_v3_mla(dsv3):
    lay, m, train, infer = dsv3
    check_all(lay, m, train, infer, 4)


def test_round_robin_experts_are_views_in_ep_local_order():
    # vLLM's --expert-placement-strategy round_robin (DeepSeek-V3 has 8
    # expert groups): EP rank r of 4 holds experts r, r + 4, ...; its
    # w13_weight[j] is expert r + 4j.
    train = "tp=2,pp=2,ep=4,dp=2"
    infer = "tp=2,dp=2,ep=1,placement=round_robin"
    lay = build_layout("deepseek-v3", train, infer, layers=4, scale_down=64)
    m = model_of("deepseek-v3", 64, train, infer)
    check_all(lay, m, train, infer, 4)
    first = lay.info["infer"]["ranks"][0]
    fake = vllm_params(m, infer, 3, 4)
    got = reshard.vllm_tensors(lay, fake.params, first + 3)
    w2 = fake.by_name()["model.layers.3.mlp.experts.w2_weight"]
    for j in (0, 1, 63):
        view = got[f"model.layers.3.mlp.experts.{3 + 4 * j}.down_proj.weight"]
        assert view.data_ptr() == w2[j].data_ptr()
    assert sorted(int(n.split(".")[5]) for n in got
                  if n.startswith("model.layers.3.mlp.experts.")
                  and n.endswith("down_proj.weight")) == list(range(3, 256, 4))


def test_mla_down_projections_view_or_copy(dsv3):
    lay, m, train, infer = dsv3
    name = "model.layers.0.self_attn.fused_qkv_a_proj.weight"
    for adjacent in (True, False):
        fake = megatron_params(m, train, 1, 4, mla_adjacent=adjacent)
        p = fake.by_name()
        q = p["decoder.layers.0.self_attention.linear_q_down_proj.weight"]
        kv = p["decoder.layers.0.self_attention.linear_kv_down_proj.weight"]
        q.normal_()
        kv.normal_()
        got = reshard.megatron_tensors(lay, fake.module(), 1)[name]
        assert torch.equal(got, torch.cat([q, kv]))
        assert (got.data_ptr() == q.data_ptr()) == adjacent


def test_expert_bias_is_a_buffer(dsv3):
    lay, m, train, infer = dsv3
    fake = megatron_params(m, train, 4, 4)            # stage 1: layer 3 MoE
    got = reshard.megatron_tensors(lay, fake.module(), 4)
    bias = got["model.layers.3.mlp.gate.e_score_correction_bias"]
    assert bias.dtype == torch.float32
    with pytest.raises(ReshardError, match=r"mlp\.router\.expert_bias.*"
                                           r"buffer"):
        reshard.megatron_tensors(lay, fake.params, 4)   # parameters only
    # Float16Module casts it to bf16 until the router's first forward: an
    # fp32 copy of what it holds.
    name = "decoder.layers.1.mlp.router.expert_bias"
    half = dict(fake.by_name())
    half[name] = torch.tensor([1.5, -2.0, 3.25] + [0.0] * (m.experts - 3),
                              dtype=torch.bfloat16)
    got = reshard.megatron_tensors(lay, half, 4)
    bias = got["model.layers.3.mlp.gate.e_score_correction_bias"]
    assert bias.dtype == torch.float32
    assert bias[:3].tolist() == [1.5, -2.0, 3.25]
    # Megatron receiving (src and dst swapped): a destination must be the
    # buffer itself, a copy would drop what arrives.
    back = lay.to_dict()
    for t in back["tensors"]:
        t["src"], t["dst"] = t["dst"], t["src"]
    with pytest.raises(ReshardError, match="_maintain_float32_expert_bias"):
        reshard.megatron_tensors(back, half, 4, side="dst")


# --- errors, layout forms ----------------------------------------------------

@pytest.fixture(scope="module")
def dense():
    m = small(8, 4, 4, num_hidden_layers=4)
    train, infer = "tp=2,pp=2,dp=1", "tp=2"
    return build_layout(m, train, infer), m, train, infer


def test_missing_parameter(dense):
    lay, m, train, infer = dense
    p = megatron_params(m, train, 3, 4).by_name()       # stage 1, tp 1
    del p["decoder.layers.1.self_attention.linear_qkv.weight"]
    del p["output_layer.weight"]
    with pytest.raises(ReshardError) as e:
        reshard.megatron_tensors(lay, p, 3)
    msg = str(e.value)
    assert "rank 3" in msg
    assert ("model.layers.3.self_attn.qkv_proj.weight: no parameter "
            "'decoder.layers.1.self_attention.linear_qkv.weight' (layer 3 "
            "is layer 1 of this rank's pipeline stage)") in msg
    assert "lm_head.weight: no parameter 'output_layer.weight'" in msg
    first = lay.info["infer"]["ranks"][0]
    v = vllm_params(m, infer, 1, 4).by_name()
    del v["model.layers.2.mlp.down_proj.weight"]
    with pytest.raises(ReshardError, match=r"model\.layers\.2\.mlp\."
                                           r"down_proj\.weight: no parameter"):
        reshard.vllm_tensors(lay, v, first + 1)


def test_mis_shaped_parameter(dense):
    lay, m, train, infer = dense
    p = megatron_params(m, train, 0, 4).by_name()
    p["decoder.layers.0.mlp.linear_fc2.weight"] = torch.empty(16, 32)
    with pytest.raises(ReshardError, match=r"parameter 'decoder\.layers\.0\."
                       r"mlp\.linear_fc2\.weight' has shape \[16, 32\], but "
                       r"rank 0's shard is \[16, 16\]"):
        reshard.megatron_tensors(lay, p, 0)


def test_mis_shaped_stacked_experts():
    train, infer = "tp=2,pp=2,ep=2,dp=2", "tp=4,dp=2,ep=1"
    lay = build_layout("qwen3-235b-a22b", train, infer, layers=2,
                       scale_down=64)
    m = model_of("qwen3-235b-a22b", 64, train, infer)
    first = lay.info["infer"]["ranks"][0]
    v = vllm_params(m, infer, 0, 2).by_name()
    name = "model.layers.1.mlp.experts.w2_weight"
    v[name] = torch.empty([17] + list(v[name].shape[1:]), dtype=BF16)
    with pytest.raises(ReshardError, match=r"w2_weight' has shape \[17, 64, "
                                           r"24\], but \[local experts\].* is "
                                           r"\[16, 64, 24\]"):
        reshard.vllm_tensors(lay, v, first)
    # vLLM's Blackwell bf16 experts (FlashInfer TRT-LLM) rewrite w13 into a
    # 4-D block layout after loading: named, not mapped.
    v = vllm_params(m, infer, 0, 2).by_name()
    name = "model.layers.1.mlp.experts.w13_weight"
    e, f2, h = v[name].shape
    v[name] = torch.zeros(e, -(-h // 128), f2, 128, dtype=BF16)
    with pytest.raises(ReshardError, match=r"w13_weight' has shape "
                       r"\[.*\] \(FlashInfer TRT-LLM's block layout"):
        reshard.vllm_tensors(lay, v, first)
    # Megatron's legacy GroupedMLP is named in the message.
    p = megatron_params(m, train, 0, 2).by_name()
    p = {n: t for n, t in p.items() if ".experts." not in n}
    p["decoder.layers.0.mlp.experts.weight1"] = torch.empty(1)
    with pytest.raises(ReshardError, match="legacy GroupedMLP"):
        reshard.megatron_tensors(lay, p, 0)


def test_mis_shaped_fused_buffer_of_pieces():
    m = small(8, 2, 4, num_hidden_layers=1)
    lay = build_layout(m, "tp=2", "tp=8")
    v = vllm_params(m, "tp=8", 3, 1).by_name()
    v["model.layers.0.self_attn.qkv_proj.weight"] = torch.empty(4, 16)
    with pytest.raises(ReshardError, match=r"has shape \[4, 16\], but the "
                                           r"fused buffer rank 5 holds of "
                                           r"model\.layers\.0\.self_attn\."
                                           r"qkv_proj\.weight is \[12, 16\]"):
        reshard.vllm_tensors(lay, v, 2 + 3)


def test_layout_as_dict_or_json_file(dense, tmp_path):
    lay, m, train, infer = dense
    fake = megatron_params(m, train, 1, 4)
    want = reshard.megatron_tensors(lay, fake.params, 1)
    path = tmp_path / "layout.json"
    lay.write_json(str(path))
    d = json.loads(path.read_text())
    for form in (d, str(path), path):
        got = reshard.megatron_tensors(form, fake.params, 1)
        assert {n: (v.data_ptr(), tuple(v.shape)) for n, v in got.items()} \
            == {n: (v.data_ptr(), tuple(v.shape)) for n, v in want.items()}
    with pytest.raises(ReshardError, match="give the layout"):
        reshard.megatron_tensors(str(tmp_path / "layout.mlir"), fake.params,
                                 1)


def test_rank_holding_nothing_and_bad_arguments(dense):
    lay, m, train, infer = dense
    assert reshard.vllm_tensors(lay, [], 0) == {}       # a trainer rank
    assert reshard.megatron_tensors(lay, {}, 99) == {}
    with pytest.raises(ReshardError, match="not a global rank"):
        reshard.megatron_tensors(lay, {}, -1)
    with pytest.raises(ReshardError, match=r"params\[0\]: str is not a "
                                           r"\(name, tensor\) pair"):
        reshard.vllm_tensors(lay, ["model.norm.weight"], 2)
    np = pytest.importorskip("numpy")
    assert reshard.megatron_tensors(lay, {}, np.int64(99)) == {}
    for params, msg in [
            ({"model.norm.weight": None}, "'model.norm.weight' is a "
                                          "NoneType, not a tensor"),
            ({1: torch.empty(2)}, r"params\[0\]: tuple is not a"),
            (type("M", (), {"named_parameters": lambda self: 3})(),
             r"named_parameters\(\): not an iterable")]:
        with pytest.raises(ReshardError, match=msg):
            reshard.vllm_tensors(lay, params, 2)
    with pytest.raises(ReshardError, match="prefix=1: give a string"):
        reshard.megatron_tensors(lay, {}, 0, prefix=1)
    with pytest.raises(ReshardError, match="prefix=b'x': give a string"):
        reshard.vllm_tensors(lay, {}, 2, prefix=b"x")
    with pytest.raises(ReshardError, match="unused= takes a list"):
        reshard.vllm_tensors(lay, {}, 2, unused=())
    with pytest.raises(ReshardError, match=r"layer_offset=\[\[2\]\]: one "
                                           r"offset per model chunk"):
        reshard.megatron_tensors(lay, {}, 0, layer_offset=[[2]])


def test_malformed_layout_json_is_named(dense):
    """A layout dict the helpers read is checked for its structure first:
    each problem named by its place, never a bare TypeError/KeyError."""
    lay = dense[0]
    good = lay.to_dict()
    mesh = next(iter(good["meshes"]))

    def broken(change):
        d = json.loads(json.dumps(good))
        change(d)
        return d
    cases = [
        (lambda d: d.update(meshes=[]), "'meshes' must map names"),
        (lambda d: d.update(tensors=None), "'tensors' must be a list"),
        (lambda d: d.update(tensors=[5]), r"tensors\[0\]: not an object"),
        (lambda d: d["tensors"][0].pop("shape"),
         r"tensors\[0\]: missing 'shape'"),
        (lambda d: d["tensors"][0].update(name=5), "non-empty string"),
        (lambda d: d["tensors"].append(d["tensors"][0]), "listed twice"),
        (lambda d: d["tensors"][0].update(shape=[-1] + d["tensors"][0][
            "shape"][1:]), "shape must be a list of integers >= 0"),
        (lambda d: d["tensors"][0].update(src=None), "src: give mesh and"),
        (lambda d: d["tensors"][0]["src"].update(mesh="nope"),
         "src: no mesh 'nope'"),
        (lambda d: d["tensors"][0]["dst"].update(dims=[]),
         "dst: dims must be"),
        (lambda d: d["tensors"][0]["src"].update(blocks=5),
         "blocks must be an object"),
        (lambda d: d["tensors"][0]["src"].update(order={"0": [[0]]}),
         r"order\[0\] must be \[start, length\] pairs"),
        (lambda d: d["tensors"][0]["dst"].update(quant={"block": 5}),
         r"\.dst: TypeError"),
        (lambda d: d["tensors"][0].update(copy_of=None),
         "copy_of must be a tensor name"),
        (lambda d: d["tensors"][0].update(scales_of="x"),
         "scales_of is not a layout key"),
        (lambda d: d["meshes"][mesh].update(ranks=d["meshes"][mesh][
            "ranks"] + [99]), "ranks must be"),
        (lambda d: d["meshes"][mesh].update(shape=[0]), "shape must be "
                                                        "sizes >= 1")]
    for change, msg in cases:
        with pytest.raises(ReshardError, match=msg):
            reshard.megatron_tensors(broken(change), {}, 0)


# --- FP8 destinations --------------------------------------------------------

@pytest.mark.parametrize("infer", ["tp=2,dp=1,ep=1,fp8=mx",
                                   "tp=1,dp=2,ep=1,fp8=mx,redundant=2"])
def test_fp8_scales_map_to_vllm_scale_parameters(have_tools, tmp_path,
                                                 infer):
    """fp8=mx: each quantized weight's `<name>.scale` is vLLM's
    `weight_scale` beside the weight (one E8M0 byte per 32 elements of a
    row), and for routed experts row j of the stacked `w13_weight_scale` /
    `w2_weight_scale`; on every inference rank each view has the shape the
    compiled plan reports for it (plan.local_shape, computed by the C++
    tables independently of names.py)."""
    import shutil
    if not shutil.which("mpicxx"):
        pytest.skip("mpicxx is not installed")
    from orders_ref import GATED
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(GATED))
    train = "tp=4,ep=2,dp=1"
    lay = build_layout(str(cfg), train, infer, layers=2, colocated=True)
    # The gated qkv keeps vLLM's storage order, so it stays bf16.
    assert lay.info["infer"]["fp8"]["quantized"] >= 8, lay.info["infer"]
    path = tmp_path / "layout.json"
    lay.write_json(str(path))
    plan = reshard.compile(str(path), backend="mpi",
                           cache_dir=str(tmp_path / "cache"))
    m = model_of(str(cfg), 1, train, infer)
    first = lay.info["infer"]["ranks"][0]
    quantized = {t.name for t in lay.tensors if t.dst.quant}
    for rank in world(lay, "dst"):
        fake = vllm_params(m, infer, rank - first, 2)
        params = {n: t for n, t in fake.by_name().items()
                  if not n.endswith("_scale")}
        for n, t in list(params.items()):
            stacked = n.endswith(("w13_weight", "w2_weight"))
            if stacked or n in quantized:
                params[n + "_scale"] = torch.zeros(
                    list(t.shape[:-1]) + [math.ceil(t.shape[-1] / 32)],
                    dtype=torch.uint8)
        got = reshard.vllm_tensors(lay, params, rank)
        scales = [n for n in got if n.endswith(".scale")]
        assert scales, rank
        # A routed expert's scales are the row of the scale stack at the
        # weight's own slot (EPLB's physical slot with redundant=).
        for n in scales:
            w, base = got[n[:-len(".scale")]], ".".join(n.split(".")[:5])
            if ".experts." not in n:
                continue
            stack = "w13_weight" if "gate_up" in n else "w2_weight"
            ws, ss = params[f"{base}.{stack}"], \
                params[f"{base}.{stack}_scale"]
            slot = (w.data_ptr() - ws.data_ptr()) // (
                ws.stride(0) * ws.element_size())
            assert got[n].data_ptr() == ss[slot].data_ptr(), (rank, n)
        for name in plan.tensors:
            want = plan.local_shape(name, rank, "dst")
            if want is None or not math.prod(want):
                continue
            assert tuple(got[name].shape) == want, (rank, name)


def test_fp8_scales_of_qkv_pieces_are_rows_of_weight_scale_inv():
    """fp8=block with KV heads replicated (vLLM TP4 over 2 KV heads): qkv
    is planned as pieces, rows of each rank's fused qkv_proj, and each
    piece's scales are the rows of that rank's qkv_proj.weight_scale_inv
    from the piece's row offset / 128: views of vLLM's parameter, of the
    shape the layout gives the scale shard."""
    m = small(4, 2, 128, hidden_size=256, intermediate_size=512)
    train, infer = "tp=2,dp=1", "tp=4,dp=1,fp8=block"
    lay = build_layout(m, train, infer)
    pieces = {t.name: t for t in lay.tensors if "fused_into" in t.extra}
    assert pieces and all(t.dst.quant for t in pieces.values())
    quantized = {t.name for t in lay.tensors if t.dst.quant}
    first = lay.info["infer"]["ranks"][0]
    for rank in world(lay, "dst"):
        params = dict(vllm_params(m, infer, rank - first, 1).by_name())
        for n, t in list(params.items()):
            if n in quantized or n.endswith("qkv_proj.weight"):
                params[n + "_scale_inv"] = torch.arange(
                    math.ceil(t.shape[0] / 128) * math.ceil(t.shape[1] / 128),
                    dtype=torch.float32).reshape(
                        math.ceil(t.shape[0] / 128),
                        math.ceil(t.shape[1] / 128))
        got = reshard.vllm_tensors(lay, params, rank)
        inv = params["model.layers.0.self_attn.qkv_proj.weight_scale_inv"]
        mine = [n for n in got if n[:-len(".scale")] in pieces]
        assert mine, rank
        for n in mine:
            piece = pieces[n[:-len(".scale")]]
            row = piece.extra["fused_offset"]["dst"] // 128
            assert list(got[n].shape) == [piece.shape[0] // 128,
                                          math.ceil(piece.shape[1] / 128)]
            assert got[n].data_ptr() == inv[row].data_ptr(), (rank, n)


def test_fp8_packed_ue8m0_scales_are_refused_with_a_hint():
    """vLLM on Blackwell with DeepGEMM replaces weight_scale_inv by int32
    words of packed E8M0 bytes, [n, ceil(k/512)], after loading: an
    in-place refit would write fp32 scales over them, so vllm_tensors
    refuses the parameter by its shape and says what it is."""
    m = small(4, 2, 128, hidden_size=256, intermediate_size=512)
    train, infer = "tp=2,dp=1", "tp=2,dp=1,fp8=ue8m0"
    lay = build_layout(m, train, infer)
    quantized = {t.name for t in lay.tensors if t.dst.quant}
    assert all(t.dst.quant == {"block": [128, 128], "scale_fmt": "ue8m0"}
               for t in lay.tensors if t.dst.quant)
    first = lay.info["infer"]["ranks"][0]
    params = dict(vllm_params(m, infer, 0, 1).by_name())
    for n, t in list(params.items()):
        if n in quantized:
            params[n + "_scale_inv"] = torch.zeros(
                math.ceil(t.shape[0] / 128), math.ceil(t.shape[1] / 128))
    assert reshard.vllm_tensors(lay, params, first)
    name = "model.layers.0.mlp.down_proj.weight"
    n, k = params[name].shape
    params[name + "_scale_inv"] = torch.zeros(n, math.ceil(k / 512),
                                              dtype=torch.int32)
    with pytest.raises(ReshardError, match=r"down_proj\.weight_scale_inv' "
                                           r"has shape .*DeepGEMM's packed "
                                           r"UE8M0 scales"):
        reshard.vllm_tensors(lay, params, first)


W13_FP8 = [
    ("tp=2,ep=2", "tp=2,dp=2,ep=1,w13=up_gate,fp8=block"),     # EP
    ("tp=1,ep=2,dp=2", "tp=2,w13=up_gate,fp8=block"),  # FusedMoE TP
    ("tp=2,ep=1,etp=2", "tp=1,dp=2,ep=1,w13=up_gate,fp8=block"),  # etp
    ("tp=2,ep=2", reshard.vllm.Infer(dp=4, ep=True, redundant=4,
                                     expert_map=[1, 1, 0, 2, 3, 0, 2, 3],
                                     w13="up_gate", fp8="block")),
    ("tp=2,ep=2", "tp=2,dp=2,ep=1,w13=up_gate,fp8=mx"),        # MXFP8
]


@pytest.mark.parametrize("train,infer", W13_FP8)
def test_fp8_w13_up_gate_pieces_are_rows_of_both_frameworks(train, infer):
    """vLLM's FlashInfer experts keep w13 as [up_t; gate_t] (w13=up_gate);
    with fp8=block the layout delivers it as two FP8 pieces: on vLLM, the
    gate is rows [f_t, 2 f_t) of w13_weight[j] and the up rows [0, f_t),
    their scales the same rows / 128 of w13_weight_scale_inv[j] (fp8=mx:
    the same rows of w13_weight_scale[j]; under EPLB j is each copy's
    slot, two copies on one rank included); on
    Megatron, rows [0, f_r) and [f_r, 2 f_r) of linear_fc1.weight{j}.
    Where each expert is, is the fakes' own model of the frameworks."""
    from test_orders import moe
    m = moe(hidden_size=256, moe_intermediate_size=256)
    lay = build_layout(m, train, infer)
    pieces = {t.name: t for t in lay.tensors
              if t.extra.get("fused_into", "").endswith("gate_up_proj.weight")}
    w2 = [t for t in lay.tensors if ".down_proj.weight" in t.name and
          ".experts." in t.name]
    # Two pieces for every expert (and every EPLB copy), all FP8.
    assert len(pieces) == 2 * len(w2) >= 8
    assert all(t.dst.quant for t in pieces.values())
    quantized = {t.name for t in lay.tensors if t.dst.quant}
    mx = "mx" in next(iter(pieces.values())).dst.quant
    rows, cols, suffix = (1, 32, "_scale") if mx else \
        (128, 128, "_scale_inv")
    first, seen = lay.info["infer"]["ranks"][0], 0
    for rank in world(lay, "dst"):
        fake = vllm_params(m, infer, rank - first, 2)
        params = {n: t for n, t in fake.by_name().items()
                  if not n.endswith("_scale")}
        for n, t in list(params.items()):
            if n in quantized or n.endswith(("w13_weight", "w2_weight")):
                params[n + suffix] = torch.empty(
                    list(t.shape[:-2]) + [math.ceil(t.shape[-2] / rows),
                                          math.ceil(t.shape[-1] / cols)])
        got = reshard.vllm_tensors(lay, params, rank)
        for name, piece in pieces.items():
            if name not in got:
                continue
            (w13, j), = fake.stores[name.rsplit(".", 1)[0]]
            ft = w13.shape[1] // 2
            row = ft if name.endswith(".part0") else 0      # [up; gate]
            inv = params[[n for n, t in params.items() if t is w13][0]
                         + suffix]
            assert got[name].shape == (ft, 256), (rank, name)
            assert got[name].data_ptr() == w13[j][row].data_ptr()
            assert got[name + ".scale"].shape == (ft // rows, 256 // cols)
            assert got[name + ".scale"].data_ptr() == \
                inv[j][row // rows].data_ptr(), (rank, name)
            seen += 1
    assert seen >= len(pieces)
    for rank in world(lay, "src"):
        fake = megatron_params(m, train, rank, 2)
        got = reshard.megatron_tensors(lay, fake.module(), rank)
        for name, piece in pieces.items():
            if name not in got:
                continue
            (fc1, _), = fake.stores[piece.extra["fused_into"]]
            fr = fc1.shape[0] // 2
            row = 0 if name.endswith(".part0") else fr      # [gate; up]
            assert got[name].shape == (fr, 256), (rank, name)
            assert got[name].data_ptr() == fc1[row].data_ptr(), (rank, name)


def test_fp8_w13_up_gate_stays_whole_where_a_half_cuts_a_block():
    """FusedMoE's TP 2 over f = 128: each rank's gate and up are 64 rows,
    half a block, so vLLM keeps the experts unquantized (the tensor stays
    whole, in FlashInfer's order, and is counted as left)."""
    from test_orders import moe
    m = moe(hidden_size=256, moe_intermediate_size=128)
    lay = build_layout(m, "tp=1,ep=2,dp=2", "tp=2,w13=up_gate,fp8=block")
    experts = [t for t in lay.tensors if "experts.0.gate_up" in t.name]
    assert [t.name for t in experts] == [
        "model.layers.1.mlp.experts.0.gate_up_proj.weight"]
    assert experts[0].dst.order and not experts[0].dst.quant
    assert lay.info["infer"]["fp8"]["left"] >= 4
