"""The presets' storage orders, element by element: every rank's local
rows of linear_qkv / qkv_proj / w13, read from the JSON the preset writes
through the independent oracle, against references written from the
frameworks' own conventions (orders_ref.py); then reshard-run --check on
preset slices."""
import json

import pytest

from reshard import tools
from reshard.errors import ReshardError
from reshard.models import from_hf_config, get_model, scale_model
from reshard.refit import build_layout
from reshard.vllm import parse_infer

from orders_ref import (GATED, chunk, fused_rows, megatron_ref, small,
                        vllm_ref)

QKV_CASES = [
    # (model, Megatron tp, vLLM tp): groups vs TP on each side.
    (small(8, 4, 4), 4, 4),             # groups == tp, both
    (small(8, 4, 4, bias=True), 2, 2),  # groups > tp: two per rank
    (small(8, 2, 4, bias=True), 4, 2),  # groups < tp on Megatron
    (small(8, 2, 4), 4, 4),             # ... and KV replicas on vLLM
    (small(8, 2, 4), 2, 8),             # KV replicas, 4 per head
    (small(8, 1, 4), 8, 8),             # one group (MQA) over 8
    (small(8, 2, 4, gated=True, bias=True), 4, 2),
    (small(8, 2, 4, gated=True, bias=True), 4, 4),
    (small(8, 4, 4, gated=True), 2, 8),
    ("qwen3-235b-a22b", 8, 4),          # nq 64, nkv 4 at Megatron tp 8
    ("qwen3-235b-a22b", 8, 8),
    ("llama-3.1-70b", 8, 16),           # one group a rank; vLLM replicas
]


@pytest.mark.parametrize("model,mtp,vtp", QKV_CASES,
                         ids=lambda x: getattr(x, "name", str(x)))
def test_qkv_rows_of_every_rank(model, mtp, vtp):
    scale = 64 if isinstance(model, str) else 1
    lay = build_layout(model, f"tp={mtp},dp=2", f"tp={vtp},engines=2",
                       layers=1, scale_down=scale)
    d = json.loads(json.dumps(lay.to_dict()))
    m = scale_model(get_model(model), scale, (mtp, vtp))
    dims = (m.heads, m.kv_heads, m.head_dim, m.attn_output_gate)
    want_src = megatron_ref(*dims, mtp)
    want_dst = vllm_ref(*dims, vtp)
    base = "model.layers.0.self_attn.qkv_proj."
    first = lay.info["infer"]["ranks"][0]
    for suffix in ("weight", "bias") if m.qkv_bias else ("weight",):
        src = fused_rows(d, base + suffix, "src")
        dst = fused_rows(d, base + suffix, "dst")
        assert sorted(src) == list(range(2 * mtp))     # dp 2 replicas
        for rank, rows in src.items():
            assert rows == want_src[rank % mtp], (suffix, rank)
        assert sorted(dst) == list(range(first, first + 2 * vtp))
        for rank, rows in dst.items():
            assert rows == want_dst[(rank - first) % vtp], (suffix, rank)


def test_megatron_refuses_only_what_megatron_refuses():
    # TransformerConfig: query groups a multiple or a divisor of tp.
    with pytest.raises(ReshardError, match="num_query_groups 3 and tp 2: "
                                           "neither divides the other"):
        build_layout(small(6, 3, 4), "tp=2", "tp=1")
    build_layout(small(8, 2, 4), "tp=8", "tp=2")        # groups < tp: fine


# --- w13: [gate; up] by default, FlashInfer's [up; gate] on request --------

def moe(**kw):
    cfg = dict(model_type="qwen3_moe", num_hidden_layers=2, hidden_size=16,
               num_attention_heads=4, num_key_value_heads=2, head_dim=4,
               intermediate_size=24, moe_intermediate_size=8, num_experts=4,
               mlp_only_layers=[0], vocab_size=256)
    cfg.update(kw)
    return from_hf_config(cfg, "moe")


@pytest.mark.parametrize("infer", ["tp=2,w13=up_gate",
                                   "tp=2,dp=2,ep=1,w13=up_gate",
                                   "tp=2", "tp=2,dp=2,ep=1"])
def test_w13_orders(infer):
    lay = build_layout(moe(), "tp=2,ep=2", infer)
    d = json.loads(json.dumps(lay.to_dict()))
    first, i = lay.info["infer"]["ranks"][0], parse_infer(infer)
    f = 8
    gate, up = list(range(f)), list(range(f, 2 * f))
    swap = i.w13 == "up_gate"
    for e in range(4):
        name = f"model.layers.1.mlp.experts.{e}.gate_up_proj.weight"
        dst = fused_rows(d, name, "dst")
        parts = 1 if i.ep else i.tp
        for rank, rows in dst.items():
            t = 0 if i.ep else (rank - first) % i.tp
            g, u = chunk(gate, parts)[t], chunk(up, parts)[t]
            assert rows == (u + g if swap else g + u), (name, rank)
        # Megatron's expert linear_fc1 (etp 1): [gate; up] whole.
        assert all(rows == gate + up for rows in
                   fused_rows(d, name, "src").values())
    # The dense MLP (MergedColumnParallelLinear) stays [gate_t; up_t].
    dense = fused_rows(d, "model.layers.0.mlp.gate_up_proj.weight", "dst")
    fd = 24
    for rank, rows in dense.items():
        t = (rank - first) % i.tp
        assert rows == chunk(list(range(fd)), 2)[t] + \
            chunk(list(range(fd, 2 * fd)), 2)[t]
    assert lay.info["infer"].get("w13", "gate_up") == i.w13


def test_w13_spec_errors():
    with pytest.raises(ReshardError, match="w13='gate': give gate_up or "
                                           "up_gate"):
        parse_infer("tp=2,w13=gate")
    assert parse_infer("tp=2").w13 == "gate_up"


# --- end to end: reshard-run --check on preset slices ----------------------


E2E = [
    ("llama-3.1-70b", "tp=4,pp=2,dp=1", "tp=8,dp=1", 64),
    ("qwen3-235b-a22b", "tp=8,ep=8,dp=1", "tp=8,dp=1,ep=1", 64),
    ("qwen3-235b-a22b", "tp=8,ep=4,dp=1", "tp=4,dp=2,w13=up_gate", 64),
    ("gated", "tp=4,ep=2,dp=1", "tp=4,dp=1", 1),
    ("gated", "tp=4,ep=2,dp=1", "tp=2,dp=2,w13=up_gate", 1),
]


@pytest.mark.parametrize("model,train,infer,scale", E2E)
def test_preset_slices_run_and_check(round_trip, tmp_path, model, train,
                                     infer, scale):
    if model == "gated":
        model = str(tmp_path / "config.json")
        with open(model, "w") as f:
            json.dump(GATED, f)
    lay = build_layout(model, train, infer, layers=2, scale_down=scale)
    assert "all correct" in tools.check(round_trip(lay))
