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
from reshard.megatron import Train as reshard_train
from reshard.megatron import parse_train
from reshard.vllm import parse_infer

from orders_ref import (FP8_MOE, GATED, GPT_OSS, chunk, fused_rows,
                        megatron_ref, megatron_vocab_rows, shards, small,
                        vllm_ref, vllm_vocab_rows, vocab_ref)

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
                                   "tp=2", "tp=2,dp=2,ep=1",
                                   "tp=2,w13=up_gate,fp8=block",
                                   "tp=2,dp=2,ep=1,w13=up_gate,fp8=block"])
def test_w13_orders(infer):
    """Each rank's w13 rows in both frameworks; with fp8= (experts of
    whole [128, 128] blocks) FlashInfer's [up; gate] comes as two FP8
    pieces, gate and up, at their rows of each rank's buffer."""
    f = 256 if "fp8" in infer else 8
    lay = build_layout(moe(hidden_size=f, moe_intermediate_size=f),
                       "tp=2,ep=2", infer)
    d = json.loads(json.dumps(lay.to_dict()))
    first, i = lay.info["infer"]["ranks"][0], parse_infer(infer)
    if i.fp8:
        experts = [t for t in lay.tensors if ".experts." in t.name and
                   "gate_up" in t.name]
        assert len(experts) == 8 and all(
            t.dst.quant == {"block": [128, 128]} and t.shape == [f, f]
            for t in experts), [t.name for t in experts]
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


@pytest.mark.parametrize("train,infer,moe_tp", [
    ("tp=2,dp=2,ep=2", "tp=4", 4),
    ("tp=2,dp=2,ep=2", "tp=2,dp=2", 4),         # FusedMoE's TP: dp*tp
    ("tp=2,ep=2", "tp=2,dp=2,ep=1", 1)])        # vLLM EP: experts whole
def test_gpt_oss_gate_up_as_the_frameworks_load_it(train, infer, moe_tp):
    """Each rank's gpt-oss gate_up buffer, element by element, against the
    checkpoint sliced as each framework loads it: vLLM's gpt_oss.py takes
    columns 2*start .. 2*end of gate_up_proj [h, 2f] (interleaved: column
    2i gate i, 2i + 1 up i) and transposes them; Megatron-Bridge
    de-interleaves into [gate; up] (Megatron-Core's expert TP rank x would
    hold [gate_x; up_x], but it refuses MoE biases with etp > 1). The layout's buffers (the oracle's element
    order, dim orders included) must be exactly those."""
    m = from_hf_config(GPT_OSS)
    lay = build_layout(m, train, infer)
    d = json.loads(json.dumps(lay.to_dict()))
    first, t = lay.info["infer"]["ranks"][0], parse_train(train)
    f, h = m.moe_intermediate, m.hidden
    # The logical [2, f, h] element (g, i, k) is the checkpoint's
    # gate_up_proj[k, 2i + g] (its bias [2i + g]); name it by its index.
    def hf_col(col):            # -> the logical (g, i) of a column
        return col % 2, col // 2
    for e in range(m.experts):
        for what in ("weight", "bias"):
            name = f"model.layers.1.mlp.experts.{e}.gate_up_proj.{what}"
            (tensor,) = [x for x in d["tensors"] if x["name"] == name]
            ks = range(h) if what == "weight" else [None]
            def index(g, i, k):
                return (g * f + i) * h + k if k is not None else g * f + i
            for rank, (_, got) in shards.local_shards(d, tensor,
                                                      "dst").items():
                tt = (rank - first) % moe_tp
                fs = f // moe_tp
                want = [index(*hf_col(c), k)
                        for c in range(2 * tt * fs, 2 * (tt + 1) * fs)
                        for k in ks]
                assert got == want, (name, "vLLM", rank)
            for rank, (_, got) in shards.local_shards(d, tensor,
                                                      "src").items():
                x, fe = rank % t.etp, f // t.etp
                want = [index(g, i, k) for g in (0, 1)
                        for i in range(x * fe, (x + 1) * fe) for k in ks]
                assert got == want, (name, "Megatron", rank)


def test_w13_spec_errors():
    with pytest.raises(ReshardError, match="w13='gate': give gate_up or "
                                           "up_gate"):
        parse_infer("tp=2,w13=gate")
    assert parse_infer("tp=2").w13 == "gate_up"


# --- padded vocab: Megatron's vocab_pad=, vLLM's multiple of 64 -------------

VOCAB_CASES = [
    # (model, train, infer): padded on one side, both, or neither.
    (small(8, 4, 4, vocab_size=200, num_hidden_layers=2),
     "tp=4,pp=2,vocab_pad=16", "tp=2,dp=2"),            # both pad
    (small(8, 4, 4, vocab_size=256), "tp=4,vocab_pad=128", "tp=4"),
    (small(8, 4, 4, vocab_size=100), "tp=4,dp=2,vocab_pad=64",
     "tp=2,engines=2"),                                 # padding-only ranks
    (small(8, 4, 4, vocab_size=200, num_hidden_layers=2,
           tie_word_embeddings=True), "tp=2,pp=2,vocab_pad=32",
     "tp=2,pp=2"),                                      # tied, vLLM pp
    (small(8, 4, 4, vocab_size=256), "tp=2,vocab_pad=1", "tp=4"),  # none
    (small(8, 4, 4, vocab_size=200), "tp=2,padded_vocab=320", "tp=1"),
    ("deepseek-v3", "tp=8,pp=2,ep=8,vocab_pad=128", "tp=16"),
]


@pytest.mark.parametrize("model,train,infer", VOCAB_CASES,
                         ids=lambda x: getattr(x, "name", str(x)))
def test_vocab_rows_of_every_rank(model, train, infer):
    lay = build_layout(model, train, infer, layers=0 if isinstance(
        model, str) else None)
    d = json.loads(json.dumps(lay.to_dict()))
    m = get_model(model)
    t, i = parse_train(train), parse_infer(infer)
    ns, nd = megatron_vocab_rows(m, t), vllm_vocab_rows(m, i)
    first = lay.info["infer"]["ranks"][0]
    names = ["model.embed_tokens.weight"] + \
        ([] if m.tie_embeddings else ["lm_head.weight"])
    for name in names:
        stage = 0 if name.startswith("model.embed") else t.pp - 1
        want = vocab_ref(m.vocab, ns, t.tp)
        src = fused_rows(d, name, "src")
        held = [r for r in range(t.world) if r // t.stage_size == stage
                and want[r % t.tp]]
        assert sorted(src) == held, name
        for rank, rows in src.items():
            assert rows == want[rank % t.tp], (name, rank)
        want = vocab_ref(m.vocab, nd, i.tp)
        dst = fused_rows(d, name, "dst")
        stages = {0, i.pp - 1} if m.tie_embeddings else \
            {0 if name.startswith("model.embed") else i.pp - 1}
        held = [r for r in range(first, first + i.world)
                if (r - first) // (i.pcp * i.tp) % i.pp in stages
                and want[(r - first) % i.tp]]
        assert sorted(dst) == held, name
        for rank, rows in dst.items():
            assert rows == want[(rank - first) % i.tp], (name, rank)
        # The buffers' rows, padding included, as the frameworks hold them.
        for e in d["tensors"]:
            if e.get("fused_into") == name:
                assert e["fused_buffer_rows"] == {"src": ns, "dst": nd}
    padded = ns * t.tp != m.vocab or nd * i.tp != m.vocab
    assert any("fused_buffer_rows" in e for e in d["tensors"]) == padded
    assert lay.info["train"].get("padded_vocab") == (
        None if ns * t.tp == m.vocab else ns * t.tp)


def test_vocab_padding_specs():
    assert parse_train("tp=2,vocab_pad=128").vocab_pad == 128
    assert parse_train("tp=2").vocab_pad is None
    with pytest.raises(ReshardError, match="vocab_pad must be positive"):
        parse_train("tp=2,vocab_pad=0")
    with pytest.raises(ReshardError, match="vocab_pad=1.5 must be a positive"):
        reshard_train(tp=2, vocab_pad=1.5)
    # Megatron refuses an unpadded vocab that tp does not divide ...
    m = small(8, 4, 4, vocab_size=202)
    with pytest.raises(ReshardError, match="vocab 202 % tp 8 .*vocab_pad="):
        build_layout(m, "tp=8", "tp=1")
    build_layout(m, "tp=8,vocab_pad=1", "tp=1")
    # ... and vLLM a padded vocab that tp does not divide.
    m = small(12, 3, 4, vocab_size=300, intermediate_size=48)
    with pytest.raises(ReshardError, match=r"^vLLM: vocab 300, padded to 320 "
                                           r".* % tp 3$"):
        build_layout(m, "tp=1", "tp=3")
    build_layout(m, "tp=1", "tp=1")
    # padded_vocab=: Megatron-LM's args.padded_vocab_size outright.
    assert parse_train("tp=2,padded_vocab=320").padded_vocab == 320
    for spec, why in [("tp=2,padded_vocab=321", "padded_vocab=321 % tp 2"),
                      ("tp=2,padded_vocab=320,vocab_pad=64",
                       "vocab_pad= or padded_vocab=, not both")]:
        with pytest.raises(ReshardError, match=why):
            parse_train(spec)
    with pytest.raises(ReshardError, match="padded_vocab=192 holds fewer "
                                           "rows than the vocab 202"):
        build_layout(small(8, 4, 4, vocab_size=202), "tp=2,padded_vocab=192",
                     "tp=1")
    with pytest.raises(ReshardError, match="with scale_down"):
        build_layout("llama-3.1-70b", "tp=8,padded_vocab=129024", "tp=8",
                     layers=1, scale_down=64)


# --- end to end: reshard-run --check on preset slices ----------------------


E2E = [
    ("llama-3.1-70b", "tp=4,pp=2,dp=1", "tp=8,dp=1", 64),
    ("qwen3-235b-a22b", "tp=8,ep=8,dp=1", "tp=8,dp=1,ep=1", 64),
    ("qwen3-235b-a22b", "tp=8,ep=4,dp=1", "tp=4,dp=2,w13=up_gate", 64),
    ("gated", "tp=4,ep=2,dp=1", "tp=4,dp=1", 1),
    ("gated", "tp=4,ep=2,dp=1", "tp=2,dp=2,w13=up_gate", 1),
    # FP8 gate and up pieces of FlashInfer's [up; gate] w13, and the rest.
    ("fp8-moe", "tp=2,ep=2,dp=1", "tp=2,dp=2,ep=1,w13=up_gate,fp8=block", 1),
    # Scaled down, the vocab is 2048 (a multiple of lcm(64, tps)), which
    # vocab_pad=192 (a multiple of 1536) pads to 3072.
    ("deepseek-v3", "tp=8,pp=2,ep=8,vocab_pad=192", "tp=4,dp=2", 64),
    ("gated-v200", "tp=4,ep=2,vocab_pad=16", "tp=2,dp=2", 1),
    # EPLB: 128 + 8 physical experts, 17 a rank, 8 experts on two ranks.
    ("qwen3-235b-a22b", "tp=8,ep=8,dp=1", "tp=1,dp=8,ep=1,redundant=8", 64),
]


@pytest.mark.parametrize("model,train,infer,scale", E2E)
def test_preset_slices_run_and_check(round_trip, tmp_path, model, train,
                                     infer, scale):
    if model.startswith(("gated", "fp8")):
        cfg = dict(GATED, vocab_size=200) if model == "gated-v200" else \
            FP8_MOE if model == "fp8-moe" else GATED
        model = str(tmp_path / "config.json")
        with open(model, "w") as f:
            json.dump(cfg, f)
    lay = build_layout(model, train, infer, layers=2, scale_down=scale)
    if "vocab_pad" in train:            # the vocab is pieces
        assert lay.info["train"]["padded_vocab"] > get_model(model).vocab \
            if scale == 1 else lay.info["train"]["padded_vocab"] == 3072
    assert "all correct" in tools.check(round_trip(lay))


def test_eplb_copies_run_and_check(round_trip, tmp_path):
    # A rebalanced EPLB map with two copies of an expert on one rank: the
    # second copy is a tensor of its own (`.copy1`), planned and checked
    # element by element like every other.
    from reshard.vllm import Infer
    model = str(tmp_path / "config.json")
    with open(model, "w") as f:
        json.dump(GATED, f)
    infer = Infer(dp=4, ep=True, redundant=4,
                  expert_map=[5, 5, 1, 2, 3, 4, 6, 7, 0, 7, 0, 7])
    lay = build_layout(model, "tp=4,ep=2,dp=1", infer, layers=2)
    copies = [t.name for t in lay.tensors if "copy_of" in t.extra]
    assert copies == [f"model.layers.1.mlp.experts.{e}.{w}.weight.copy1"
                      for e in (5, 7) for w in ("gate_up_proj",
                                                   "down_proj")]
    assert "all correct" in tools.check(round_trip(lay))
