"""Presets from Hugging Face configs: hand-checked shapes and the public
totals of the bundled models; config errors."""
import math

import pytest

from reshard.cli import hf_params
from reshard.errors import ReshardError
from reshard.models import (count_params, from_hf_config, get_model,
                            model_params)


def shapes(model, layers=None):
    return {n: s for n, s, _ in hf_params(model_params(model, layers))}


@pytest.mark.parametrize("name,total", [
    ("llama-3.1-70b", 70_553_706_496),
    ("qwen3-235b-a22b", 235_093_634_560),
    ("deepseek-v3", 671_026_419_200),
    ("mixtral-8x7b", 46_702_792_704),
    ("kimi-k2", 1_026_408_232_448),
])
def test_bundled_totals_match_public_counts(name, total):
    m = get_model(name)
    n = count_params(model_params(m))
    assert n == total
    # Published as 70.55B, 235.09B, 671.03B (no MTP layer), 46.7B and
    # 1.03T (Kimi-K2, 61 layers x 384 routed experts).
    digits = {"mixtral-8x7b": 1, "kimi-k2": -1}.get(name, 2)
    assert round(n / 1e9, digits) * 1e9 == m.public_params


def test_kimi_k2_tensors():
    # 60 MoE layers (the first is dense) x 384 routed experts x 2 weights
    # (vLLM's fused gate_up_proj, and down_proj) make most of its ~47k.
    ps = list(model_params(get_model("kimi-k2")))
    assert len(ps) == 46_813
    experts = [p for p in ps if ".mlp.experts." in p.name]
    assert len(experts) == 60 * 384 * 2


def test_mixtral_shapes():
    # Hand-checked against Mixtral-8x7B's checkpoint: per layer attention
    # 41,943,040 + router 32,768 + 8 experts x 3 x 14336 x 4096 + 2 norms
    # = 1,451,270,144; x 32 + 2 x 32000 x 4096 + 4096 = 46,702,792,704.
    m = get_model("mixtral-8x7b")
    s = shapes(m, 1)
    l0 = "model.layers.0."
    assert s[l0 + "self_attn.q_proj.weight"] == [4096, 4096]
    assert s[l0 + "self_attn.k_proj.weight"] == [1024, 4096]
    assert s[l0 + "block_sparse_moe.gate.weight"] == [8, 4096]
    for e in (0, 7):
        x = f"{l0}block_sparse_moe.experts.{e}."
        assert s[x + "w1.weight"] == [14336, 4096]
        assert s[x + "w3.weight"] == [14336, 4096]
        assert s[x + "w2.weight"] == [4096, 14336]
    assert l0 + "mlp.gate_proj.weight" not in s        # every layer is MoE
    assert len(s) == 1 + 2 + 4 + 1 + 8 * 3 + 2
    fused = {p.name: p for p in model_params(m, 1)}
    w13 = fused[l0 + "block_sparse_moe.experts.3.w13.weight"]
    assert (w13.shape, w13.blocks, w13.expert) == ([28672, 4096],
                                                   [14336, 14336], 3)


def test_llama_70b_shapes():
    s = shapes(get_model("llama-3.1-70b"), 1)
    l0 = "model.layers.0."
    assert s["model.embed_tokens.weight"] == [128256, 8192]
    assert s[l0 + "self_attn.q_proj.weight"] == [8192, 8192]
    assert s[l0 + "self_attn.k_proj.weight"] == [1024, 8192]
    assert s[l0 + "self_attn.v_proj.weight"] == [1024, 8192]
    assert s[l0 + "self_attn.o_proj.weight"] == [8192, 8192]
    assert s[l0 + "mlp.gate_proj.weight"] == [28672, 8192]
    assert s[l0 + "mlp.up_proj.weight"] == [28672, 8192]
    assert s[l0 + "mlp.down_proj.weight"] == [8192, 28672]
    assert s["lm_head.weight"] == [128256, 8192]
    assert len(s) == 1 + 9 + 2


def test_qwen3_moe_shapes():
    m = get_model("qwen3-235b-a22b")
    s = shapes(m, 1)
    l0 = "model.layers.0."
    assert s[l0 + "self_attn.q_proj.weight"] == [8192, 4096]
    assert s[l0 + "self_attn.k_proj.weight"] == [512, 4096]
    assert s[l0 + "self_attn.q_norm.weight"] == [128]
    assert s[l0 + "self_attn.o_proj.weight"] == [4096, 8192]
    assert s[l0 + "mlp.gate.weight"] == [128, 4096]
    assert s[l0 + "mlp.experts.127.gate_proj.weight"] == [1536, 4096]
    assert s[l0 + "mlp.experts.127.down_proj.weight"] == [4096, 1536]
    assert l0 + "mlp.gate_proj.weight" not in s        # every layer is MoE
    assert m.dense_layers == ()


def test_glm45_shapes_and_totals():
    # GLM-4.5 (355B-A32B on its model card) and GLM-4.5-Air (106B-A12B),
    # counted by hand from the architecture: vocab 151552, 96 heads and 8
    # KV heads of 128 (q/k/v biases, GLM-4.5's q/k norms), dense layers
    # first, then 160 (128) routed experts, one shared expert, a router and
    # its score bias. The MTP layer is left out.
    def total(h, layers, dense, f, experts, fe, qk_norm):
        attn = (96 + 16) * 128 * (h + 1) + h * 96 * 128 + 2 * h \
            + 2 * 128 * qk_norm
        moe = (experts + 1) * 3 * h * fe + experts * (h + 1)
        return (2 * 151552 * h + layers * attn + dense * 3 * h * f
                + (layers - dense) * moe + h)
    m = get_model("glm-4.5")
    assert count_params(model_params(m)) == \
        total(5120, 92, 3, 12288, 160, 1536, True) == 352_797_829_024
    air = get_model("glm-4.5-air")
    assert count_params(model_params(air)) == \
        total(4096, 46, 1, 10944, 128, 1408, False) == 106_852_251_264
    s = shapes(m, 4)
    l2, l3 = "model.layers.2.", "model.layers.3."
    assert s[l2 + "self_attn.q_proj.weight"] == [12288, 5120]
    assert s[l2 + "self_attn.k_proj.bias"] == [1024]
    assert s[l2 + "self_attn.q_norm.weight"] == [128]
    assert l2 + "self_attn.o_proj.bias" not in s
    assert s[l2 + "mlp.gate_proj.weight"] == [12288, 5120]
    assert s[l3 + "mlp.gate.weight"] == [160, 5120]
    assert s[l3 + "mlp.gate.e_score_correction_bias"] == [160]
    assert s[l3 + "mlp.shared_experts.up_proj.weight"] == [1536, 5120]
    assert s[l3 + "mlp.experts.159.down_proj.weight"] == [5120, 1536]
    assert "model.layers.0.self_attn.q_norm.weight" not in shapes(air, 1)
    glm = dict(n_routed_experts=4, moe_intermediate_size=16,
               first_k_dense_replace=1, n_shared_experts=1)
    with pytest.raises(ReshardError, match="use_qk_norm=1 is not true or "
                                           "false"):
        small("glm4_moe", use_qk_norm=1, **glm)
    with pytest.raises(ReshardError, match="lacks n_routed_experts"):
        small("glm4_moe", moe_intermediate_size=16)


def test_gpt_oss_shapes_and_totals():
    # gpt-oss-120b and -20b (OpenAI's model card: 116.83B and 20.91B),
    # counted by hand from the architecture: vocab 201088 (untied), 64
    # heads and 8 KV heads of 64 with q/k/v and o biases and a sink per
    # head, every layer MoE: a router with a bias, experts of 2880 with
    # gate/up and down biases.
    def total(layers, experts, v=201088, h=2880, f=2880):
        attn = (64 + 16) * 64 * (h + 1) + h * 64 * 64 + h + 64
        moe = experts * (h + 1) + experts * (3 * h * f + 2 * f + h)
        return 2 * v * h + h + layers * (2 * h + attn + moe)
    m = get_model("gpt-oss-120b")
    assert count_params(model_params(m)) == total(36, 128) == \
        116_829_156_672
    assert round(116_829_156_672 / 1e9, 2) * 1e9 == m.public_params
    small20 = get_model("gpt-oss-20b")
    assert count_params(model_params(small20)) == total(24, 32) == \
        20_914_757_184
    ps = {p.name: p for p in model_params(m, 1)}
    l0 = "model.layers.0."
    assert "model.embedding.weight" in ps and "lm_head.weight" in ps
    assert ps[l0 + "attn.qkv_proj.bias"].blocks == [4096, 512, 512]
    assert ps[l0 + "attn.sinks"].shape == [64]
    assert ps[l0 + "attn.o_proj.bias"].role == "rep"
    assert ps[l0 + "mlp.router.bias"].shape == [128]
    up = ps[l0 + "mlp.experts.127.gate_up_proj.weight"]
    assert (up.shape, up.role, up.expert) == ([2, 2880, 2880], "glu", 127)
    assert ps[l0 + "mlp.experts.0.gate_up_proj.bias"].shape == [2, 2880]
    assert ps[l0 + "mlp.experts.0.down_proj.weight"].shape == [2880, 2880]
    assert ps[l0 + "mlp.experts.0.down_proj.bias"].role == "rep_tp0"
    assert len(ps) == 1 + 7 + 2 + 128 * 4 + 2
    # `params` prints the checkpoint's names and its packed experts.
    s = shapes(small20, 1)
    assert s["model.embed_tokens.weight"] == [201088, 2880]
    assert s["model.layers.0.self_attn.q_proj.bias"] == [4096]
    assert s["model.layers.0.self_attn.sinks"] == [64]
    e = "model.layers.0.mlp.experts."
    assert (s[e + "gate_up_proj"], s[e + "gate_up_proj_bias"],
            s[e + "down_proj"], s[e + "down_proj_bias"]) == (
        [32, 2880, 5760], [32, 5760], [32, 2880, 2880], [32, 2880])
    assert not any(".experts.0." in n or ".attn." in n for n in s)
    assert sum(math.prod(v) for v in shapes(small20).values()) == \
        20_914_757_184


def test_qwen3_next_shapes_and_total():
    # Qwen3-Next-80B-A3B counted by hand: 36 Gated DeltaNet layers (16 key
    # heads, 32 value heads of 128, conv kernel 4) and 12 gated-attention
    # layers (16 heads of 256, 2 KV heads, q/k norms), 512 routed experts of
    # 512, a gated shared expert of 512 in every layer.
    h, nk, nv, d, v = 2048, 16, 32, 128, 151936
    gdn = (2 * nk * d + 2 * nv * d) * h + 2 * nv * h \
        + (2 * nk * d + nv * d) * 4 + 2 * nv + d + h * nv * d
    attn = (16 * 2 + 2 * 2) * 256 * h + 2 * 256 + h * 16 * 256
    moe = 512 * 3 * h * 512 + 512 * h + 3 * h * 512 + h
    total = 2 * v * h + 36 * gdn + 12 * attn + 48 * (moe + 2 * h) + h
    m = get_model("qwen3-next-80b-a3b")
    assert count_params(model_params(m)) == total == 79_674_391_296
    assert m.linear_layers == tuple(l for l in range(48) if l % 4 != 3)
    s = shapes(m, 4)
    l0, l3 = "model.layers.0.", "model.layers.3."
    assert s[l0 + "linear_attn.in_proj_qkvz.weight"] == [12288, 2048]
    assert s[l0 + "linear_attn.in_proj_ba.weight"] == [64, 2048]
    assert s[l0 + "linear_attn.conv1d.weight"] == [8192, 1, 4]
    assert s[l0 + "linear_attn.A_log"] == [32]
    assert s[l0 + "linear_attn.norm.weight"] == [128]
    assert l0 + "self_attn.q_proj.weight" not in s
    assert s[l3 + "self_attn.q_proj.weight"] == [8192, 2048]    # with gates
    assert s[l3 + "mlp.shared_expert.up_proj.weight"] == [512, 2048]
    assert s[l3 + "mlp.shared_expert_gate.weight"] == [1, 2048]
    lin = dict(num_experts=4, moe_intermediate_size=16,
               linear_num_key_heads=2, linear_num_value_heads=4,
               linear_key_head_dim=8, linear_value_head_dim=8,
               linear_conv_kernel_dim=4, head_dim=16,
               shared_expert_intermediate_size=0)
    explicit = small("qwen3_next", layer_types=["full_attention",
                                                "linear_attention"], **lin)
    assert explicit.linear_layers == (1,) and explicit.shared_ffn == 0
    for kw, msg in (
            (dict(layer_types=["linear_attention"]), "layer_types must list 2"),
            (dict(linear_num_value_heads=3), "linear_num_value_heads 3 is "
                                             "not a multiple"),
            (dict(attention_bias=True), "attention_bias is not supported"),
            (dict(linear_conv_kernel_dim=None), "lacks linear_conv_kernel"),
            # HF's defaults (512, 256) are not ours: required.
            (dict(shared_expert_intermediate_size=None),
             "lacks shared_expert_intermediate_size"),
            (dict(head_dim=None), "lacks head_dim")):
        with pytest.raises(ReshardError, match=msg):
            small("qwen3_next", **dict(lin, **kw))


def test_qwen3_5_nested_config():
    # Qwen3.5/3.6 (a VLM): the text model's fields under text_config, the
    # dtype and tie_word_embeddings at the top; in_proj_qkvz is vLLM's
    # [in_proj_qkv; in_proj_z], in blocks.
    text = dict(model_type="qwen3_5_moe_text", num_hidden_layers=4,
                hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                head_dim=16, num_experts=8, moe_intermediate_size=16,
                shared_expert_intermediate_size=32, linear_num_key_heads=2,
                linear_num_value_heads=4, linear_key_head_dim=8,
                linear_value_head_dim=8, linear_conv_kernel_dim=4,
                vocab_size=256)
    m = from_hf_config(dict(model_type="qwen3_5_moe", text_config=text,
                            tie_word_embeddings=True, torch_dtype="float16"))
    assert (m.model_type, m.dtype, m.tie_embeddings, m.gdn_flat) == \
        ("qwen3_5_moe", "fp16", True, True)
    assert m.linear_layers == (0, 1, 2) and m.attn_output_gate and m.qk_norm
    p = {x.name: x for x in model_params(m)}
    qkvz = p["model.layers.0.linear_attn.in_proj_qkvz.weight"]
    assert (qkvz.shape, qkvz.blocks) == ([96, 64], [16, 16, 32, 32])
    s = shapes(m)
    assert s["model.layers.0.linear_attn.in_proj_qkv.weight"] == [64, 64]
    assert s["model.layers.0.linear_attn.in_proj_a.weight"] == [4, 64]
    dense = dict(text, model_type="qwen3_5_text", intermediate_size=32)
    d = from_hf_config(dict(model_type="qwen3_5", text_config=dense))
    assert d.experts == 0 and d.gdn_flat and not d.shared_gate
    assert shapes(d)["model.layers.0.mlp.gate_proj.weight"] == [32, 64]
    # A text model's own config (Qwen3_5MoeForCausalLM saves this type);
    # MoE in every layer whatever mlp_only_layers says (HF drops the key).
    alone = from_hf_config(dict(text, mlp_only_layers=[1]))
    assert (alone.model_type, alone.gdn_flat, alone.dense_layers) == \
        ("qwen3_5_moe", True, ())
    with pytest.raises(ReshardError, match="tie_word_embeddings is True but "
                                           "text_config's is False"):
        from_hf_config(dict(model_type="qwen3_5_moe", tie_word_embeddings=True,
                            text_config=dict(text, tie_word_embeddings=False)))
    with pytest.raises(ReshardError, match="layer_scale is not supported"):
        from_hf_config(dict(text, layer_scale=True))


def test_deepseek_v3_shapes():
    s = shapes(get_model("deepseek-v3"), 4)
    l2, l3 = "model.layers.2.", "model.layers.3."
    assert s[l2 + "self_attn.q_a_proj.weight"] == [1536, 7168]
    assert s[l2 + "self_attn.kv_a_proj_with_mqa.weight"] == [576, 7168]
    assert s[l2 + "self_attn.q_a_layernorm.weight"] == [1536]
    assert s[l2 + "self_attn.q_b_proj.weight"] == [128 * 192, 1536]
    assert s[l2 + "self_attn.kv_a_layernorm.weight"] == [512]
    assert s[l2 + "self_attn.kv_b_proj.weight"] == [128 * 256, 512]
    assert s[l2 + "self_attn.o_proj.weight"] == [7168, 128 * 128]
    assert s[l2 + "mlp.gate_proj.weight"] == [18432, 7168]   # dense (< 3)
    assert l3 + "mlp.gate_proj.weight" not in s
    assert s[l3 + "mlp.gate.weight"] == [256, 7168]
    assert s[l3 + "mlp.gate.e_score_correction_bias"] == [256]
    assert s[l3 + "mlp.shared_experts.gate_proj.weight"] == [2048, 7168]
    assert s[l3 + "mlp.shared_experts.down_proj.weight"] == [7168, 2048]
    assert s[l3 + "mlp.experts.255.up_proj.weight"] == [2048, 7168]
    bias = [p for p in model_params(get_model("deepseek-v3"), 4)
            if p.name.endswith("e_score_correction_bias")]
    assert {p.dtype for p in bias} == {"fp32"}


def small(model_type, **kw):
    cfg = {"model_type": model_type, "num_hidden_layers": 2,
           "hidden_size": 64, "num_attention_heads": 4,
           "num_key_value_heads": 2, "intermediate_size": 128,
           "vocab_size": 256, "torch_dtype": "bfloat16"}
    cfg.update(kw)
    return from_hf_config(cfg, "tiny")


def test_qwen2_has_qkv_bias_and_tied_embeddings_drop_lm_head():
    m = small("qwen2", tie_word_embeddings=True)
    s = shapes(m)
    assert s["model.layers.0.self_attn.q_proj.bias"] == [64]
    assert s["model.layers.0.self_attn.k_proj.bias"] == [32]
    assert "model.layers.0.self_attn.o_proj.bias" not in s
    assert "lm_head.weight" not in s
    # embed 256*64, per layer: 2 norms, qkv 128*64 + bias 128, o 64*64,
    # mlp 3*128*64; final norm.
    per_layer = 2 * 64 + 128 * 64 + 128 + 64 * 64 + 3 * 128 * 64
    assert count_params(model_params(m)) == 256 * 64 + 2 * per_layer + 64


def test_qwen3_dense_and_head_dim():
    s = shapes(small("qwen3", head_dim=32))
    assert s["model.layers.1.self_attn.q_proj.weight"] == [128, 64]
    assert s["model.layers.1.self_attn.k_norm.weight"] == [32]


def test_qwen3_moe_mlp_only_layers_and_sparse_step():
    m = small("qwen3_moe", num_experts=4, moe_intermediate_size=16,
              num_hidden_layers=4, decoder_sparse_step=2, mlp_only_layers=[3])
    assert m.dense_layers == (0, 2, 3)
    s = shapes(m)
    assert s["model.layers.1.mlp.experts.3.gate_proj.weight"] == [16, 64]
    assert s["model.layers.3.mlp.gate_proj.weight"] == [128, 64]


def test_attention_output_gate():
    # Qwen3-Next's gated attention: q_proj holds [q_h; gate_h] per head.
    m = small("qwen3", head_dim=32, attn_output_gate=True,
              attention_bias=True)
    assert m.attn_output_gate and not small("qwen3").attn_output_gate
    s = shapes(m)
    assert s["model.layers.0.self_attn.q_proj.weight"] == [256, 64]
    assert s["model.layers.0.self_attn.q_proj.bias"] == [256]
    assert s["model.layers.0.self_attn.k_proj.weight"] == [64, 64]
    assert s["model.layers.0.self_attn.o_proj.weight"] == [64, 128]
    qkv = {p.name: p for p in model_params(m)}[
        "model.layers.0.self_attn.qkv_proj.weight"]
    assert (qkv.shape, qkv.blocks) == ([384, 64], [256, 64, 64])
    with pytest.raises(ReshardError, match="attn_output_gate='yes' is not "
                                           "true or false"):
        small("qwen3", attn_output_gate="yes")
    assert not small("qwen3", attn_output_gate=None).attn_output_gate


@pytest.mark.parametrize("cfg,msg", [
    ({"model_type": "gpt2"}, "unsupported model_type 'gpt2'"),
    ({"model_type": "gpt_oss", "num_hidden_layers": 1, "hidden_size": 8,
      "num_attention_heads": 2, "vocab_size": 64, "intermediate_size": 8},
     "lacks num_local_experts"),
    ({"model_type": "llama", "hidden_size": 8}, "lacks num_hidden_layers"),
    ({"model_type": "qwen3_moe", "num_hidden_layers": 1, "hidden_size": 8,
      "num_attention_heads": 2, "vocab_size": 64}, "lacks num_experts"),
    ({"model_type": "llama", "num_hidden_layers": "x", "hidden_size": 8,
      "num_attention_heads": 2, "vocab_size": 64, "intermediate_size": 8},
     "is not a non-negative integer"),
])
def test_config_errors(cfg, msg):
    with pytest.raises(ReshardError, match=msg):
        from_hf_config(cfg, "bad")


def test_unknown_model_name():
    with pytest.raises(ReshardError, match="no model 'nope'"):
        get_model("nope")


@pytest.mark.parametrize("kw,msg", [
    # Optional integer fields are checked like the required ones (they
    # used to raise TypeError or give float shapes).
    ({"num_key_value_heads": "x"}, "num_key_value_heads='x' is not a"),
    ({"head_dim": 2.5}, "head_dim=2.5 is not a non-negative integer"),
    ({"intermediate_size": -1}, "intermediate_size=-1 is not a"),
    ({"num_key_value_heads": 3}, "num_attention_heads 4 is not a multiple "
                                 "of num_key_value_heads 3"),
])
def test_optional_fields_are_checked(kw, msg):
    with pytest.raises(ReshardError, match=msg):
        small("llama", **kw)


def test_moe_optional_fields_are_checked():
    with pytest.raises(ReshardError, match="mlp_only_layers='3' is not a "
                                           "list"):
        small("qwen3_moe", num_experts=4, moe_intermediate_size=16,
              mlp_only_layers="3")
    mla = dict(n_routed_experts=4, moe_intermediate_size=16, kv_lora_rank=16,
               qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8)
    with pytest.raises(ReshardError, match="first_k_dense_replace='x'"):
        small("deepseek_v3", first_k_dense_replace="x", **mla)
    with pytest.raises(ReshardError, match="attention_bias is not supported "
                                           "with MLA"):
        small("deepseek_v3", attention_bias=True, **mla)
    with pytest.raises(ReshardError, match="attn_output_gate is not "
                                           "supported with MLA"):
        small("deepseek_v3", attn_output_gate=True, **mla)


def test_llama_mlp_bias():
    # LlamaMLP(bias=config.mlp_bias): gate/up/down biases (were dropped).
    m = small("llama", mlp_bias=True)
    s = shapes(m, 1)
    assert s["model.layers.0.mlp.gate_proj.bias"] == [128]
    assert s["model.layers.0.mlp.up_proj.bias"] == [128]
    assert s["model.layers.0.mlp.down_proj.bias"] == [64]
    assert count_params(model_params(m)) == \
        count_params(model_params(small("llama"))) + 2 * (2 * 128 + 64)
    assert not small("qwen2", mlp_bias=True).mlp_bias   # Llama's field only


def test_deepseek_v2_lite_without_q_lora():
    # DeepSeek-V2-Lite: q_lora_rank null gives q_proj; 15,706,484,224
    # parameters (the safetensors total).
    m = from_hf_config({
        "model_type": "deepseek_v2", "hidden_size": 2048,
        "intermediate_size": 10944, "kv_lora_rank": 512,
        "moe_intermediate_size": 1408, "moe_layer_freq": 1,
        "n_routed_experts": 64, "n_shared_experts": 2,
        "num_attention_heads": 16, "num_hidden_layers": 27,
        "num_key_value_heads": 16, "q_lora_rank": None,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
        "vocab_size": 102400, "first_k_dense_replace": 1,
        "topk_method": "greedy", "tie_word_embeddings": False,
        "torch_dtype": "bfloat16"}, "v2-lite")
    assert count_params(model_params(m)) == 15_706_484_224
    s = shapes(m, 2)
    assert s["model.layers.0.self_attn.q_proj.weight"] == [16 * 192, 2048]
    assert "model.layers.0.self_attn.q_a_proj.weight" not in s
    assert "model.layers.1.mlp.gate.e_score_correction_bias" not in s


@pytest.mark.parametrize("layers", [-1, 3])
def test_layers_out_of_range(layers):
    # range(-1) used to give a silently empty model, 3 a made-up layer.
    with pytest.raises(ReshardError, match=r"layers \(--layers\) must be in \[0, 2\]"):
        model_params(small("llama"), layers)


def test_config_not_utf8(tmp_path):
    from reshard.models import load_config
    cfg = tmp_path / "config.json"
    cfg.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ReshardError, match="not JSON"):
        load_config(str(cfg))
