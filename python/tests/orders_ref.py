"""References for the storage-order tests: each rank's rows of the fused
q/k/v and w13 tensors as the frameworks store them, written from their
conventions (not from reshard's code), and the rows a layout gives each
rank, read from its JSON through the independent oracle
test/Tools/reshard-run/Inputs/shards.py. Row ids are logical: [q; k; v],
[q; gate; k; v] with an attention output gate."""
import importlib.util
import math
import os

from reshard.models import from_hf_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location(
    "shards", os.path.join(ROOT, "test", "Tools", "reshard-run", "Inputs",
                           "shards.py"))
shards = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shards)


# A Qwen3-MoE whose experts are whole [128, 128] blocks (f = h = 256).
FP8_MOE = dict(model_type="qwen3_moe", num_hidden_layers=2, hidden_size=256,
               num_attention_heads=4, num_key_value_heads=2, head_dim=64,
               intermediate_size=256, moe_intermediate_size=256,
               num_experts=4, mlp_only_layers=[0], vocab_size=256)

# A small model with Qwen3-Next's attention (an output gate, 2 query
# groups), as an HF config.json; test_orders.py and test_runtime.py use it.
GATED = dict(model_type="qwen3_moe", num_hidden_layers=2, hidden_size=64,
             num_attention_heads=16, num_key_value_heads=2, head_dim=8,
             intermediate_size=32, moe_intermediate_size=16, num_experts=8,
             mlp_only_layers=[0], vocab_size=256, attn_output_gate=True,
             torch_dtype="bfloat16")    # Qwen3-Next's attention, small

# gpt-oss's architecture, tiny (sinks, biases everywhere, interleaved
# gate/up rows in vLLM's w13; 4 KV heads: vLLM's tp goes up to 4 at most
# with gpt_oss.py); test_names.py, test_orders.py and test_runtime.py use
# it.
GPT_OSS = dict(model_type="gpt_oss", num_hidden_layers=2, hidden_size=64,
               num_attention_heads=8, num_key_value_heads=4, head_dim=8,
               intermediate_size=32, num_local_experts=8,
               attention_bias=True, vocab_size=256,
               tie_word_embeddings=False, torch_dtype="bfloat16")

# DeepSeek-V3's architecture, tiny (MLA, a shared expert): 2 expert groups
# of 8 routed experts, layer 0 dense, layer 1 MoE; test_presets.py and
# test_runtime.py use it.
TINY_DSV3 = dict(model_type="deepseek_v3", num_hidden_layers=2,
                 hidden_size=64, num_attention_heads=4,
                 num_key_value_heads=4, intermediate_size=128,
                 moe_intermediate_size=16, n_routed_experts=8,
                 n_shared_experts=1, n_group=2, topk_group=1,
                 topk_method="noaux_tc", first_k_dense_replace=1,
                 q_lora_rank=32, kv_lora_rank=16, qk_nope_head_dim=8,
                 qk_rope_head_dim=8, v_head_dim=8, vocab_size=256,
                 torch_dtype="bfloat16")

# GLM-4.5's architecture, tiny: q/k/v biases, q/k norms, 2 query groups,
# layer 0 dense, layer 1 MoE with a shared expert and the router's score
# bias; test_runtime.py uses it.
TINY_GLM = dict(model_type="glm4_moe", num_hidden_layers=2, hidden_size=64,
                num_attention_heads=8, num_key_value_heads=2, head_dim=8,
                intermediate_size=64, moe_intermediate_size=16,
                n_routed_experts=8, n_shared_experts=1, n_group=1,
                first_k_dense_replace=1, attention_bias=True,
                use_qk_norm=True, vocab_size=256, torch_dtype="bfloat16")

# Qwen3-Next's architecture, tiny: Gated DeltaNet in layers 0 and 2 (4 key
# heads, 8 value heads), gated attention with 2 query groups in 1 and 3,
# routed experts and a gated shared expert in every layer;
# test_megatron_qkv.py, test_names.py and test_runtime.py use it.
TINY_QWEN3_NEXT = dict(
    model_type="qwen3_next", num_hidden_layers=4, hidden_size=64,
    num_attention_heads=4, num_key_value_heads=2, head_dim=16,
    intermediate_size=64, moe_intermediate_size=16, num_experts=8,
    shared_expert_intermediate_size=32, linear_num_key_heads=4,
    linear_num_value_heads=8, linear_key_head_dim=8, linear_value_head_dim=8,
    linear_conv_kernel_dim=4, full_attention_interval=2, vocab_size=256,
    torch_dtype="bfloat16")

# Qwen3.5's (and 3.6's) MoE text model, tiny and nested as its config.json
# nests it: Qwen3-Next's layers with flat in_proj_qkvz / in_proj_ba.
TINY_QWEN3_5 = dict(
    model_type="qwen3_5_moe", tie_word_embeddings=False,
    text_config=dict(TINY_QWEN3_NEXT, model_type="qwen3_5_moe_text",
                     torch_dtype=None, dtype="bfloat16"))


def chunk(rows, parts):
    """torch.chunk of a list: chunks of ceil(n / parts)."""
    c = -(-len(rows) // parts)
    return [rows[i * c:(i + 1) * c] for i in range(parts)]


def logical(nq, nkv, hd, gated):
    """Row ids of the logical q, gate, k, v (as lists of per-head lists)."""
    ids = iter(range((nq * (1 + gated) + 2 * nkv) * hd))

    def take(n):
        return [[next(ids) for _ in range(hd)] for _ in range(n)]
    q = take(nq)
    gate = take(nq) if gated else None
    return q, gate, take(nkv), take(nkv)


def flat(heads):
    return [r for h in heads for r in h]


def megatron_ref(nq, nkv, hd, gated, tp):
    """Megatron-Bridge merge_qkv_weights (per group q_g, [gate_g,] k_g,
    v_g), then ColumnParallelMapping's torch.chunk over tp."""
    q, gate, k, v = logical(nq, nkv, hd, gated)
    hpg, merged = nq // nkv, []
    for g in range(nkv):
        merged += flat(q[g * hpg:(g + 1) * hpg])
        if gated:
            merged += flat(gate[g * hpg:(g + 1) * hpg])
        merged += k[g] + v[g]
    return chunk(merged, tp)


def vllm_ref(nq, nkv, hd, gated, tp):
    """QKVParallelLinear: [q_t; k_t; v_t], q_t a chunk of the checkpoint's
    q_proj ([q_h; gate_h] per head when gated, as qwen3_next.py loads it),
    KV heads replicated when tp > nkv (head t // (tp / nkv))."""
    q, gate, k, v = logical(nq, nkv, hd, gated)
    q_proj = flat(q[h] + gate[h] for h in range(nq)) if gated else flat(q)
    out = []
    for t, qt in enumerate(chunk(q_proj, tp)):
        heads = [t // (tp // nkv)] if tp > nkv else \
            range(t * nkv // tp, (t + 1) * nkv // tp)
        out.append(qt + flat(k[h] for h in heads) + flat(v[h] for h in heads))
    return out


def rows_by_rank(d, t, side):
    """{rank: dim-0 logical rows in local order} of one tensor's side."""
    spec = t[side]
    mesh = d["meshes"][spec["mesh"]]
    return {rank: shards.dim_indices(
        t["shape"][0], spec["dims"][0], spec.get("blocks", {}).get("0"), mesh,
        shards.unravel(i, mesh["shape"]), spec.get("order", {}).get("0"))
        for i, rank in enumerate(mesh["ranks"])}


def fused_rows(d, name, side):
    """{rank: rows of the fused tensor `name` in its local buffer}: the
    tensor's own, or its pieces' placed at their offsets (a rank's rows of
    each piece, whole or split along dim 0, the pieces tiling the
    buffer)."""
    whole = [t for t in d["tensors"] if t["name"] == name]
    if whole:
        return rows_by_rank(d, whole[0], side)
    bufs = {}
    for t in d["tensors"]:
        if t.get("fused_into") != name:
            continue
        rows = [a + j for a, n in t["fused_rows"] for j in range(n)]
        off = t["fused_offset"][side]
        for rank, local in rows_by_rank(d, t, side).items():
            # Only an expert's gate and up pieces are split along dim 0.
            assert local == list(range(len(rows))) or \
                ".experts." in t["fused_into"], (t["name"], rank)
            buf = bufs.setdefault(rank, {})
            for j, r in enumerate(local):
                assert off + j not in buf
                buf[off + j] = rows[r]
    assert bufs, f"no tensor {name} and no pieces of it"
    return {rank: [buf[i] for i in range(len(buf))]
            for rank, buf in bufs.items()}


def megatron_vocab_rows(m, t):
    """Embedding / output layer rows a TP rank holds: the vocab padded to a
    multiple of make_vocab_size_divisible_by * tp
    (_vocab_size_with_padding in megatron/training/tokenizer), split
    evenly (VocabUtility); unpadded without vocab_pad."""
    if t.padded_vocab is not None:      # args.padded_vocab_size outright
        return t.padded_vocab // t.tp
    if t.vocab_pad is None:
        return m.vocab // t.tp
    multiple = t.vocab_pad * t.tp
    return math.ceil(m.vocab / multiple) * multiple // t.tp


def vllm_vocab_rows(m, i):
    """VocabParallelEmbedding / ParallelLMHead rows a TP rank holds:
    pad_vocab_size(vocab, 64) split evenly."""
    return math.ceil(m.vocab / 64) * 64 // i.tp


def vocab_ref(vocab, per_rank, tp):
    """{TP rank: rows} of a vocab split as both frameworks split it: rank
    r holds padded rows r*per_rank on, the rows past the vocab padding."""
    return {r: list(range(r * per_rank, min((r + 1) * per_rank, vocab)))
            for r in range(tp)}


def small(nq, nkv, hd, gated=False, bias=False, **kw):
    cfg = dict(model_type="qwen3", num_hidden_layers=1, hidden_size=16,
               num_attention_heads=nq, num_key_value_heads=nkv, head_dim=hd,
               intermediate_size=32, vocab_size=256, attention_bias=bias,
               attn_output_gate=gated)
    cfg.update(kw)
    return from_hf_config(cfg, f"q{nq}-kv{nkv}{'-gated' if gated else ''}")
