"""Megatron-Core and vLLM layouts against local shapes computed by hand:
TP, PP (stages, embedding and head), EP/ETP, CP, engines, vLLM EP and
KV-head replication."""
import io
import json
import os

import pytest

from reshard import tools
from reshard.errors import ReshardError
from reshard.megatron import Train, parse_train, pipeline_split
from reshard.models import count_params, get_model, model_params
from reshard.refit import build_layout
from reshard.vllm import ep_rank_of, parse_infer

from orders_ref import TINY_DSV3


def tensors(layout):
    return {t.name: t for t in layout.tensors}


def json_of(layout):
    out = io.StringIO()
    layout.write_json(out)
    return out.getvalue()


def local(t, side, rank):
    return getattr(t, side).local_shape(t.shape, rank)


def test_llama_megatron_tp8_pp2_vllm_tp8_engines4():
    lay = build_layout("llama-3.1-70b", "tp=8,pp=2,dp=4", "tp=8,engines=4")
    ts = tensors(lay)
    emb = ts["model.embed_tokens.weight"]
    assert local(emb, "src", 0) == [16032, 8192]        # vocab / tp
    assert local(emb, "src", 32) is None                 # stage 1
    qkv = ts["model.layers.0.self_attn.qkv_proj.weight"]
    # (8192 + 2*1024) / 8 rows: one query group of 8 heads + 1 KV head.
    assert local(qkv, "src", 31) == [1280, 8192]
    assert local(qkv, "dst", 64) == [1280, 8192]         # vLLM after 64
    assert local(qkv, "dst", 63) is None
    assert local(ts["model.layers.0.self_attn.o_proj.weight"], "src", 5) \
        == [8192, 1024]
    assert local(ts["model.layers.0.mlp.gate_up_proj.weight"], "src", 7) \
        == [7168, 8192]
    assert local(ts["model.layers.0.mlp.down_proj.weight"], "dst", 95) \
        == [8192, 3584]
    l40 = ts["model.layers.40.input_layernorm.weight"]
    assert local(l40, "src", 31) is None and local(l40, "src", 32) == [8192]
    head = ts["lm_head.weight"]
    assert local(head, "src", 0) is None and local(head, "src", 63) == \
        [16032, 8192]
    assert lay.info["train"]["layers_per_stage"] == [40, 40]
    # tp-cp-ep-dp-pp: dp replica d, tp rank t of stage 1 is 32 + 8d + t.
    m = head.src.mesh
    assert m.name == "train_pp1" and m.coords(32 + 8 * 3 + 5) == (3, 5)


def test_vllm_data_parallel_flattens_the_moe_tp_group():
    """vLLM's --data-parallel-size without EP: FusedMoE's TP group is the
    engine's dp*tp ranks (FusedMoEParallelConfig: rank d*tp + t of
    dp*tp), the rest TP over tp and replicated over dp. Engines are
    independent copies, and an EP group is one engine's ranks."""
    gu = "model.layers.0.mlp.experts.3.gate_up_proj.weight"
    down = "model.layers.0.mlp.experts.3.down_proj.weight"
    # Qwen3-235B / 16: moe_intermediate 96, an expert's w13 [192, 256].
    lay = build_layout("qwen3-235b-a22b", "tp=1", "tp=2,dp=4", layers=1,
                       scale_down=16, colocated=True)
    t, d = tensors(lay)[gu], tensors(lay)[down]
    assert t.dst.mesh.name == "infer_moe" and t.dst.mesh.ranks == \
        list(range(8))
    for d_rank in range(4):
        for tp_rank in range(2):
            r, k = d_rank * 2 + tp_rank, d_rank * 2 + tp_rank
            # [gate_k; up_k], 12 rows of each half.
            assert t.dst.segments(t.shape, r)[0] == \
                ((12 * k, 12), (96 + 12 * k, 12)), r
            assert d.dst.segments(d.shape, r)[1] == ((12 * k, 12),), r
    o = tensors(lay)["model.layers.0.self_attn.o_proj.weight"]
    assert local(o, "dst", 0) == local(o, "dst", 2) == [256, 512 // 2]
    assert lay.info["infer"]["dp"] == 4 and "engines" not in lay.info[
        "infer"]
    # Two engines of dp 2: each engine's 4 ranks split the experts, the
    # engines hold copies.
    lay = build_layout("qwen3-235b-a22b", "tp=1", "tp=2,dp=2,engines=2",
                       layers=1, scale_down=16, colocated=True)
    t = tensors(lay)[gu]
    assert t.dst.segments(t.shape, 1) == t.dst.segments(t.shape, 5)
    assert t.dst.segments(t.shape, 1)[0] == ((24, 24), (96 + 24, 24))
    assert lay.info["infer"]["engines"] == 2
    # EP in each engine of 4 ranks (128 experts: 32 a rank); expert 40 on
    # EP rank 1 of both engines; no sequence-parallel MoE without dp.
    lay = build_layout("qwen3-235b-a22b", "tp=1", "tp=4,engines=2,ep=1",
                       layers=1, scale_down=16, colocated=True)
    t = tensors(lay)[gu.replace(".3.", ".40.")]
    assert t.dst.mesh.ranks == [1, 5] and local(t, "dst", 5) == [192, 256]
    assert not parse_infer("tp=4,engines=2,ep=1").seq_parallel_moe
    assert parse_infer("tp=2,dp=2,ep=1").seq_parallel_moe


def test_qwen3_megatron_ep_cp_and_vllm_ep_kv_replication():
    lay = build_layout("qwen3-235b-a22b",
                       "tp=2,cp=2,pp=8,ep=16,etp=1,dp=4,first=11,last=11",
                       "tp=8,dp=8,ep=1")
    ts = tensors(lay)
    assert lay.info["train"]["layers_per_stage"] == [11] + [12] * 6 + [11]
    # 128 experts / ep 16: 8 per EP rank; edp = 16 / 16 = 1, etp 1.
    for e, rank in ((0, 0), (8, 1), (127, 15)):
        t = ts[f"model.layers.0.mlp.experts.{e}.gate_up_proj.weight"]
        assert t.src.mesh.ranks == [rank]
        assert local(t, "src", rank) == [3072, 4096]
    assert ts["model.layers.11.mlp.experts.0.down_proj.weight"] \
        .src.mesh.ranks == [16]                          # stage 1
    # vLLM EP over 64 ranks, 2 experts each; ranks after the trainer's 128.
    t = ts["model.layers.0.mlp.experts.5.down_proj.weight"]
    assert t.dst.mesh.ranks == [128 + 2] and local(t, "dst", 130) == \
        [4096, 1536]
    # CP replicates: dense mesh [dp, cp, tp]; rank 5 = (1, 0, 1).
    o = ts["model.layers.0.self_attn.o_proj.weight"]
    assert o.src.mesh.axis_names == ["dp", "cp", "tp"]
    assert o.src.mesh.coords(5) == (1, 0, 1)
    assert local(o, "src", 5) == [4096, 4096]            # 8192 / tp 2
    # 4 KV heads < tp 8: each vLLM rank one KV head, replicated over 2
    # ranks, so qkv_proj is cut into pieces; Megatron TP rank 0 holds query
    # groups 0 and 1 ([q_g; k_g; v_g] each, 2048 + 128 + 128 rows).
    qkv = "model.layers.0.self_attn.qkv_proj.weight"
    parts = [t for t in lay.tensors if t.extra.get("fused_into") == qkv]
    assert len(parts) == 12                              # 3 per group
    p0, p1, p2 = parts[:3]
    assert p0.name == qkv + ".part0" and p0.shape == [1024, 4096]
    assert p0.src.mesh.name == "train_pp0_tp0"           # dp x cp replicas
    assert p0.src.mesh.ranks == [0, 2, 4, 6, 8, 10, 12, 14]
    assert p0.dst.mesh.ranks == [128 + 8 * d for d in range(8)]
    assert p0.extra["fused_rows"] == [[0, 1024]]         # q heads 0-7
    assert p1.extra["fused_offset"] == {"src": 1024, "dst": 0}
    # k_0 and v_0, after group 0's queries on Megatron, after vLLM's 1024
    # q rows; on both replicas of KV head 0 (TP ranks 0 and 1).
    assert p2.extra["fused_rows"] == [[8192, 128], [8704, 128]]
    assert p2.extra["fused_offset"] == {"src": 2048, "dst": 1024}
    assert p2.dst.mesh.name == "infer_kv0"
    assert p2.dst.mesh.ranks[:4] == [128, 129, 136, 137]
    assert parts[3].extra["fused_offset"] == {"src": 2304, "dst": 0}
    assert lay.info["infer"]["kv_head_replicas"] == 2


def test_deepseek_v3_mla_shared_experts_and_etp():
    lay = build_layout("deepseek-v3", "tp=2,pp=2,ep=4,etp=2,dp=4",
                       "tp=4,dp=2,ep=1", layers=4)
    ts = tensors(lay)
    a = ts["model.layers.0.self_attn.fused_qkv_a_proj.weight"]
    assert a.src.blocks == {0: [1536, 576]}
    assert local(a, "src", 3) == [2112, 7168] == local(a, "dst", 16)
    assert local(ts["model.layers.0.self_attn.q_b_proj.weight"], "src", 1) \
        == [12288, 1536]
    assert local(ts["model.layers.0.self_attn.kv_b_proj.weight"], "dst",
                 17) == [8192, 512]
    # spmoe auto (EP, tp > 1, dp > 1): shared experts replicated in vLLM.
    sh = ts["model.layers.3.mlp.shared_experts.gate_up_proj.weight"]
    assert local(sh, "src", 8) == [2048, 7168]           # 2*2048 / tp 2
    assert local(sh, "dst", 16) == [4096, 7168]
    # ep 4, etp 2 over 8 ranks a stage: edp = 1; 64 experts per EP group;
    # expert rank = etp_i + etp*(ep_i + ep*edp_i).
    e = ts["model.layers.3.mlp.experts.70.gate_up_proj.weight"]
    assert e.src.mesh.name == "train_pp1_ep1"            # layers 2-3: stage 1
    assert e.src.mesh.ranks == [8 + 2, 8 + 3]
    assert local(e, "src", 10) == [2048, 7168]           # 2*2048 / etp 2
    assert e.dst.mesh.ranks == [16 + 70 // 32]           # 256 / 8 per rank


def test_pipeline_split():
    assert pipeline_split(61, Train(tp=1, dp=1, pp=8, first=7, last=6)) == \
        [7, 8, 8, 8, 8, 8, 8, 6]
    # Uneven without first/last: extra layers to the middle stages first.
    assert pipeline_split(10, Train(tp=1, dp=1, pp=4)) == [2, 3, 3, 2]
    with pytest.raises(ReshardError, match="do not split evenly"):
        pipeline_split(61, Train(tp=1, dp=1, pp=8, first=6, last=6))
    # A --layers slice shorter than first + last: said so (it used to say
    # "the other -18 of 4 layers do not split evenly").
    with pytest.raises(ReshardError, match="more than the 4 layers"):
        pipeline_split(4, Train(tp=1, dp=1, pp=8, first=11, last=11))
    # Explicit layers per stage (Megatron's pipeline layout).
    t = parse_train("tp=1,dp=1,pp=3,stages=1:3:0")
    assert pipeline_split(4, t) == [1, 3, 0]
    with pytest.raises(ReshardError, match="holds 4 layers, not 5"):
        pipeline_split(5, t)
    lay = build_layout("llama-3.1-70b", "tp=1,dp=1,pp=3,stages=1:3:0",
                       "tp=1", layers=4, scale_down=64)
    ts = tensors(lay)
    assert ts["model.layers.3.mlp.down_proj.weight"].src.mesh.ranks == [1]
    assert ts["lm_head.weight"].src.mesh.ranks == [2]    # head: last stage


def test_megatron_virtual_pipeline_stages(round_trip):
    # vpp=2 over pp=2, 8 layers: chunks of 2, virtual stage k on stage
    # k % 2: layers 0-1 and 4-5 on stage 0, 2-3 and 6-7 on stage 1.
    lay = build_layout("llama-3.1-70b", "tp=2,pp=2,vpp=2", "tp=2", layers=8,
                       scale_down=64)
    ts = tensors(lay)
    for layer, stage in enumerate([0, 0, 1, 1, 0, 0, 1, 1]):
        t = ts[f"model.layers.{layer}.mlp.down_proj.weight"]
        assert t.src.mesh.name == f"train_pp{stage}", layer
    assert ts["model.embed_tokens.weight"].src.mesh.name == "train_pp0"
    assert ts["lm_head.weight"].src.mesh.name == "train_pp1"
    assert lay.info["train"]["vpp"] == 2
    assert lay.info["train"]["layers_per_chunk"] == [2, 2]
    assert lay.info["train"]["layers_per_stage"] == [4, 4]
    assert "all correct" in tools.check(round_trip(lay))


def test_layer_stages_match_megatron_core():
    """Each stage's model chunks start where megatron-core's own
    get_transformer_layer_offset puts them: even splits, first/last, with
    and without virtual pipeline stages."""
    import random
    import warnings
    from types import SimpleNamespace
    from reshard.megatron import layer_stages
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from megatron.core.transformer.transformer_layer import \
                get_transformer_layer_offset
    except Exception as e:
        pytest.skip(f"megatron-core not importable ({e}); "
                    f"bench/setup-bench.sh installs it")
    rng = random.Random(3)
    cases = [(8, "pp=2,vpp=2"), (12, "pp=4,vpp=2,first=2,last=2"),
             (18, "pp=4,vpp=2,first=4,last=2"), (61, "pp=4,first=13,last=16"),
             (24, "pp=4,vpp=3")]
    while len(cases) < 60:
        pp, vpp = rng.randint(2, 6), rng.randint(1, 4)
        if rng.random() < 0.5:
            c = rng.randint(1, 3)
            cases.append((pp * vpp * c, f"pp={pp},vpp={vpp}"))
        elif pp > 2:
            f, l, mid = (vpp * rng.randint(1, 3) for _ in range(3))
            cases.append((f + l + mid * (pp - 2),
                          f"pp={pp},vpp={vpp},first={f},last={l}"))
    for layers, spec in cases:
        t = parse_train(spec)
        cfg = SimpleNamespace(
            num_layers=layers, pipeline_model_parallel_size=t.pp,
            pipeline_model_parallel_layout=None,
            num_layers_in_first_pipeline_stage=t.first,
            num_layers_in_last_pipeline_stage=t.last,
            virtual_pipeline_model_parallel_size=t.vpp if t.vpp > 1 else None,
            account_for_embedding_in_pipeline_split=False,
            account_for_loss_in_pipeline_split=False)
        stages = layer_stages(layers, t)
        for p in range(t.pp):
            mine = [l for l in range(layers) if stages[l] == p]
            starts = [l for l in mine if l - 1 not in mine]
            theirs = [get_transformer_layer_offset(
                cfg, v if t.vpp > 1 else None, p) for v in range(t.vpp)]
            assert starts == theirs, (layers, spec, p)
            assert len(mine) == t.vpp * (len(mine) // t.vpp)


@pytest.mark.parametrize("train,msg", [
    ("tp=1,pp=2,vpp=2,first=3,last=5", "stage 0's 3 layers do not split "
                                       "into vpp=2"),
    ("tp=1,pp=2,vpp=2,stages=4:4", "vpp= with stages= is not supported"),
    ("tp=1,pp=2,vpp=2,first=0,last=8", "stage 0 holds no layers"),
    ("tp=1,pp=4,vpp=2,first=4,last=4", "stage 1 holds no layers"),
    ("tp=1,pp=1,vpp=2", "vpp=2 needs pp >= 2"),
    ("tp=1,pp=2,vpp=3", "8 layers do not split evenly into pp\\*vpp = 6"),
    ("tp=1,pp=2,vpp=0", "vpp must be positive"),
])
def test_virtual_pipeline_errors(train, msg):
    with pytest.raises(ReshardError, match=msg):
        build_layout("llama-3.1-70b", train, "tp=1", layers=8)
    with pytest.raises(ReshardError, match="stage 0 holds no layers"):
        build_layout("llama-3.1-70b", "tp=1,pp=2,vpp=2", "tp=1", layers=0)


def test_vllm_linear_expert_map_uneven():
    # 10 experts over 4 ranks: 3, 3, 2, 2.
    assert [ep_rank_of(e, 10, 4) for e in range(10)] == \
        [0, 0, 0, 1, 1, 1, 2, 2, 3, 3]


def test_vllm_round_robin_expert_map():
    # determine_expert_map, "round_robin": rank r holds r, r + 4, ...
    assert [ep_rank_of(e, 10, 4, "round_robin") for e in range(10)] == \
        [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]


@pytest.mark.parametrize("infer", ["tp=2,dp=2,ep=1,placement=round_robin",
                                   "tp=2,ep=1,engines=2,"
                                   "placement=round_robin",
                                   "tp=2,dp=2,ep=1"])
def test_vllm_expert_placement(round_trip, tmp_path, infer):
    """--expert-placement-strategy: each routed expert lives whole on the
    EP rank vLLM's determine_expert_map gives it, in every engine, and
    reshard-run checks the refit element by element."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(TINY_DSV3))
    lay = build_layout(str(cfg), "tp=2,ep=2", infer)
    i, first = parse_infer(infer), lay.info["infer"]["ranks"][0]
    ts = tensors(lay)
    for e in range(8):
        r = e % i.engine_size if i.placement == "round_robin" else e // 2
        want = [first + k * i.engine_size + r for k in range(i.engines)]
        for name in ("gate_up_proj", "down_proj"):
            t = ts[f"model.layers.1.mlp.experts.{e}.{name}.weight"]
            assert sorted(t.dst.mesh.ranks if i.engines > 1 else
                          [t.dst.mesh.ranks[0]]) == want, (e, name)
            assert local(t, "dst", want[0]) == t.shape
    assert lay.info["infer"].get("expert_placement", "linear") == \
        i.placement
    assert "all correct" in tools.check(round_trip(lay))


@pytest.mark.parametrize("infer", ["tp=2,dp=2,pcp=2", "tp=2,pcp=2,ep=1",
                                   "tp=2,pcp=2,engines=2"])
def test_vllm_prefill_context_parallel(round_trip, tmp_path, infer):
    """--prefill-context-parallel-size: an engine's ranks are DP x PCP x TP;
    PCP ranks hold the same TP shards, and the MoE group (EP, or the
    flattened MoE TP group) numbers the engine's ranks in that order."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(TINY_DSV3))
    lay = build_layout(str(cfg), "tp=2,ep=2", infer)
    i, first = parse_infer(infer), lay.info["infer"]["ranks"][0]
    assert lay.info["infer"]["pcp"] == 2
    assert lay.info["infer"]["ranks"][1] - first + 1 == i.world
    ts = tensors(lay)
    o = ts["model.layers.0.self_attn.o_proj.weight"]        # row-parallel
    e0 = ts["model.layers.1.mlp.experts.0.down_proj.weight"]
    for rank in range(first, first + i.world):
        g = rank - first                  # ((e*dp + d)*pcp + c)*tp + t
        assert local(o, "dst", rank) == [64, 32 // i.tp]
        moe = g % i.engine_size           # (d*pcp + c)*tp + t
        if i.ep:
            assert (local(e0, "dst", rank) is not None) == (moe == 0)
        else:
            # [64, 16] split on dim 1 over the engine's moe_tp ranks.
            assert local(e0, "dst", rank) == [64, 16 // i.engine_size]
    assert "all correct" in tools.check(round_trip(lay))


def test_vllm_pipeline_parallel(round_trip, tmp_path):
    """--pipeline-parallel-size: an engine's ranks are DP x PP x PCP x TP;
    a stage holds its layers (get_pp_indices' split), the embedding the
    first stage, the final norm and lm_head the last; the MoE group is a
    stage's dp*pcp*tp ranks."""
    from reshard.vllm import pp_split
    assert pp_split(61, parse_infer("pp=4")) == [15, 15, 16, 15]
    assert pp_split(7, parse_infer("pp=4")) == [2, 2, 2, 1]
    assert pp_split(8, parse_infer("pp=4")) == [2, 2, 2, 2]
    assert pp_split(5, parse_infer("pp=2,stages=1:4")) == [1, 4]
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(TINY_DSV3))
    infer = "tp=2,dp=2,pp=2,ep=1"
    lay = build_layout(str(cfg), "tp=2,ep=2", infer)
    i, first = parse_infer(infer), lay.info["infer"]["ranks"][0]
    assert lay.info["infer"]["pp"] == 2
    assert lay.info["infer"]["layers_per_stage"] == [1, 1]
    assert lay.info["infer"]["ranks"][1] - first + 1 == i.world == 8
    ts = tensors(lay)

    def rank(d, s, t):                  # engine 0, pcp 0
        return first + (d * 2 + s) * 2 + t
    stage0 = sorted(rank(d, 0, t) for d in range(2) for t in range(2))
    stage1 = sorted(rank(d, 1, t) for d in range(2) for t in range(2))
    for name, want in (("model.embed_tokens.weight", stage0),
                       ("model.layers.0.self_attn.o_proj.weight", stage0),
                       ("model.layers.1.self_attn.o_proj.weight", stage1),
                       ("model.norm.weight", stage1),
                       ("lm_head.weight", stage1)):
        assert sorted(ts[name].dst.mesh.ranks) == want, name
    # Experts of layer 1 over stage 1's EP group, rank (d*pcp + c)*tp + t.
    for e in range(8):
        r = e // 2
        t = ts[f"model.layers.1.mlp.experts.{e}.down_proj.weight"]
        assert t.dst.mesh.ranks == [rank(r // 2, 1, r % 2)], e
    assert "all correct" in tools.check(round_trip(lay))


@pytest.mark.parametrize("infer,msg", [
    ("tp=1,pp=2,stages=1:2:1", "stages= lists 3 stages for pp=2"),
    ("tp=1,pp=2,stages=1:1", "stages=1:1 holds 2 layers, not 4"),
    ("tp=1,stages=x", "stages='x': give layer counts"),
])
def test_vllm_pipeline_errors(infer, msg):
    with pytest.raises(ReshardError, match=msg):
        build_layout("llama-3.1-70b", "tp=1", infer, layers=4)


def test_vllm_pipeline_stages_with_tied_embeddings(round_trip):
    """With tied embeddings vLLM's last stage holds the embedding too (its
    lm_head's weight): one tensor on both stages' ranks, replicated."""
    from reshard.models import from_hf_config
    m = from_hf_config(dict(model_type="qwen2", num_hidden_layers=2,
                            hidden_size=64, num_attention_heads=4,
                            num_key_value_heads=2, intermediate_size=128,
                            vocab_size=256, tie_word_embeddings=True,
                            torch_dtype="bfloat16"), "tied")
    lay = build_layout(m, "tp=2", "tp=2,pp=2")
    first = lay.info["infer"]["ranks"][0]
    emb = tensors(lay)["model.embed_tokens.weight"]
    assert sorted(emb.dst.mesh.ranks) == [first, first + 1, first + 2,
                                          first + 3]
    assert local(emb, "dst", first + 3) == [128, 64]
    assert "lm_head.weight" not in tensors(lay)
    assert "all correct" in tools.check(round_trip(lay))


def test_python_specs_refuse_bad_sizes():
    from reshard.vllm import Infer
    for bad, msg in [(dict(tp=0), "tp=0 must be a positive integer"),
                     (dict(pcp=2.0), "pcp=2.0 must be a positive integer"),
                     (dict(dp=True), "dp=True must be a positive integer"),
                     (dict(ep=2), "ep=2: give True or False"),
                     (dict(stages=4), "stages=4 must be layer counts"),
                     (dict(pp=2, stages=(x for x in (2, 2))),
                      None)]:
        if msg is None:         # a generator is read once, and right
            assert Infer(**bad).stages == (2, 2)
            continue
        with pytest.raises(ReshardError, match=msg):
            Infer(**bad)
    for bad, msg in [(dict(cp=0), "cp=0 must be a positive integer"),
                     (dict(tp="2"), "tp='2' must be a positive integer"),
                     (dict(first=-1), "first=-1 must be an integer >= 0"),
                     (dict(stages="4"), "stages='4' must be layer counts"),
                     (dict(stages=4), "stages=4 must be layer counts"),
                     (dict(pp=2, stages=(1, 1, 2)),
                      "stages= lists 3 stages for pp=2"),
                     (dict(pp=2, first=2), "first= and last= together"),
                     (dict(pp=2, first=2, last=2, stages=(2, 2)),
                      "give stages= or first=/last=")]:
        with pytest.raises(ReshardError, match=msg):
            Train(**bad)
    # Fields added later keep positional construction as it was.
    assert Infer(8, 2, True).ep is True
    np = pytest.importorskip("numpy")
    t = Train(tp=np.int64(2), pp=np.int32(2), stages=(np.int64(1), 3))
    assert (type(t.tp), type(t.pp), t.stages) == (int, int, (1, 3))
    assert json_of(build_layout("llama-3.1-70b", t, Infer(tp=np.int64(2)),
                                layers=4, scale_down=64))
    with pytest.raises(ReshardError, match=r"tp\*dp\*pcp = 8 ranks"):
        parse_infer("tp=2,dp=2,pcp=2,ep=4")
    with pytest.raises(ReshardError, match="pcp must be positive"):
        parse_infer("tp=2,pcp=0")


@pytest.mark.parametrize("model,infer,msg", [
    ("tiny", "tp=2,placement=round_robin", "under expert parallel only: "
                                           "give ep=1"),
    ("kimi-k2", "tp=2,ep=1,placement=round_robin",
     r"expert groups \(n_group > 1; this one has 1\): vLLM falls back to "
     r"linear, give placement=linear"),
    ("qwen3-235b-a22b", "tp=2,ep=1,placement=round_robin",
     "this one has 0"),
    ("llama-3.1-70b", "tp=2,placement=round_robin",
     "llama-3.1-70b has no routed experts"),
])
def test_round_robin_only_where_vllm_keeps_it(tmp_path, model, infer, msg):
    if model == "tiny":
        model = str(tmp_path / "config.json")
        with open(model, "w") as f:
            json.dump(TINY_DSV3, f)
    with pytest.raises(ReshardError, match=msg):
        build_layout(model, "tp=2", infer, layers=2)
    with pytest.raises(ReshardError, match="placement='rr': give linear or "
                                           "round_robin"):
        parse_infer("tp=2,ep=1,placement=rr")


def test_specs_take_the_cli_prefix():
    # The CLI's "megatron:" / "vllm:" prefix is optional in Python; stages
    # keep their colons.
    assert parse_train("megatron:tp=8,pp=2,dp=4") == \
        parse_train("tp=8,pp=2,dp=4")
    assert parse_infer("vllm:tp=8,engines=4") == parse_infer("tp=8,engines=4")
    assert parse_train("tp=1,pp=2,stages=3:4").stages == (3, 4)
    assert parse_train("megatron:pp=2,stages=3:4").stages == (3, 4)
    a = build_layout("llama-3.1-70b", "megatron:tp=8,pp=2,dp=4",
                     "vllm:tp=8,engines=4", layers=1)
    b = build_layout("llama-3.1-70b", "tp=8,pp=2,dp=4", "tp=8,engines=4",
                     layers=1)
    assert json_of(a) == json_of(b)


def test_model_params_takes_names_and_paths():
    by_name = model_params("llama-3.1-70b")
    assert [p.name for p in by_name] == \
        [p.name for p in model_params(get_model("llama-3.1-70b"))]
    assert count_params(by_name) == 70553706496


def test_vllm_vocab_padding_at_tp_1(tmp_path):
    # vLLM pads the vocab to a multiple of 64 at every tp (1 included):
    # its embedding has 24 rows past the logical tensor's 1000, which the
    # pieces leave out.
    cfg = json.load(open(os.path.join(os.path.dirname(tools.__file__),
                                      "..", "..", "examples", "models",
                                      "llama-3.1-70b", "config.json")))
    cfg["vocab_size"] = 1000
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    lay = build_layout(str(path), "tp=1", "tp=1", layers=1)
    parts = {t.name: t.extra for t in lay.tensors if "fused_into" in t.extra}
    assert sorted(parts) == ["lm_head.weight.part0",
                             "model.embed_tokens.weight.part0"]
    for extra in parts.values():
        assert extra["fused_rows"] == [[0, 1000]]
        assert extra["fused_buffer_rows"] == {"src": 1000, "dst": 1024}
    assert lay.info["infer"]["padded_vocab"] == 1024


def test_spec_defaults():
    # Sizes left out are 1, as in Megatron's and vLLM's own arguments.
    t = parse_train("tp=8,pp=2")
    assert (t.tp, t.pp, t.dp, t.cp, t.ep, t.etp) == (8, 2, 1, 1, 1, 1)
    assert parse_train("").tp == 1
    i = parse_infer("dp=2")
    assert (i.tp, i.dp) == (1, 2)


@pytest.mark.parametrize("fn,text,msg", [
    (parse_train, "tp=x,dp=1", "tp='x' is not an integer"),
    (parse_train, "tp=8,dp=1,first=2", "first= and last= together"),
    (parse_train, "tp=8,dp=1,zz=1", "bad item 'zz=1'"),
    (parse_train, "tp=8,dp=1,pp=2,stages=1", "1 stages for pp=2"),
    (parse_train, "tp=8,dp=1,pp=2,stages=1:x", "layer counts per stage"),
    (parse_infer, "tp=8,dp=2,engines=0", "engines must be positive"),
    (parse_infer, "tp=8,ep=3", "expert parallel group"),
    (parse_infer, "tp=0", "tp must be positive"),
    (parse_train, "vllm:tp=8", "framework 'vllm' is not supported here"),
    (parse_infer, "megatron:tp=8", "use vllm:"),
])
def test_spec_errors(fn, text, msg):
    with pytest.raises(ReshardError, match=msg):
        fn(text)


@pytest.mark.parametrize("model,train,infer,msg", [
    ("llama-3.1-70b", "tp=3,dp=1", "tp=1", "num_attention_heads 64 % tp 3"),
    ("qwen3-235b-a22b", "tp=1,dp=1,ep=3", "tp=1", "num_moe_experts 128 % ep"),
    ("llama-3.1-70b", "tp=1,dp=1", "tp=3", "vLLM: num_heads 64 % tp 3"),
    ("llama-3.1-70b", "tp=1,dp=1,ep=2", "tp=1", "no experts"),
])
def test_indivisible_layouts(model, train, infer, msg):
    with pytest.raises(ReshardError, match=msg):
        build_layout(model, train, infer, layers=1)


# sha256 of the JSON that bench/make_refit_scenario.py writes for these
# presets (`--scenario NAME`; the last with `--layers 2 --scale-down 64
# --colocated`), recorded before the DTensor-style renaming of the Python
# API (DeviceMesh(mesh, mesh_dim_names=), init_device_mesh,
# Redistribution): a refactoring must leave them byte-identical. A preset
# or format change that is meant to alter them updates them here. The
# Llama and Qwen ones were updated for storage orders (Megatron's
# linear_qkv order; a KV-split qkv_proj cut into pieces); DeepSeek-V3's,
# without q/k/v, did not change.
GOLDEN = {
    ("llama70b-dgx", None): "a089a032cb7d83fc01ef4a316ba00551"
                            "fc88af068130281d2a92ae945e0c4c8a",
    ("llama70b-gb200", None): "698b976d4da832294c93c5ddc3a63878"
                              "00b200d086f89c763bd13621e4506ea1",
    ("qwen235b-dgx", None): "b56a06c49a620361d31b856a03b62f78"
                            "04ca6167a2b711512957f9833e6d0e65",
    ("deepseek-v3-dgx", None): "3202a33fe201379a35d05cc9543606a8"
                               "d704150f39c348088dd4b0100e6ec3a1",
    ("qwen235b-dgx", 2): "2158612dbd08c42c2d10c6a5019d4ae2"
                         "ed79f81b54bfa155bc93209c32e6aaa3",
}


@pytest.mark.parametrize("name,layers", sorted(GOLDEN, key=str))
def test_preset_json_is_unchanged(name, layers):
    import hashlib
    import io

    from reshard.layout import write_layout_dict
    from reshard.refit import SCENARIOS
    s = SCENARIOS[name]
    kw = {}
    train = s["train"]
    if layers is not None:          # as make_refit_scenario --layers does
        train = ",".join(i for i in train.split(",")
                         if i.split("=")[0] not in ("first", "last"))
        kw = dict(layers=layers, scale_down=64, colocated=True)
    lay = build_layout(s["model"], train, s["infer"], s["topology"],
                       scenario=name, **kw)
    f = io.StringIO()
    write_layout_dict(lay.to_dict(), f)
    digest = hashlib.sha256(f.getvalue().encode()).hexdigest()
    assert digest == GOLDEN[name, layers]


# A small Llama-style model whose dims are multiples of 128, so that every
# linear weight of a TP2 -> TP2 refit can be delivered as FP8.
SMALL = dict(model_type="llama", num_hidden_layers=1, hidden_size=256,
             num_attention_heads=2, num_key_value_heads=2, head_dim=128,
             intermediate_size=512, vocab_size=512, torch_dtype="bfloat16")


@pytest.mark.parametrize("fp8", ["block", "ue8m0", "mx"])
def test_fp8_preset_quantizes_linear_weights(round_trip, tmp_path, fp8):
    """vLLM's fp8=block ([128, 128] fp32 scales, weight_scale_inv), fp8=ue8m0
    (the same with power-of-two scales) and fp8=mx presets: every linear
    weight of the layer is delivered as FP8,
    embeddings, norms and the output layer stay bf16; the JSON and the
    dialect text agree, and reshard-run checks every payload and scale
    element against the independent reference."""
    import json
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(SMALL))
    lay = build_layout(str(cfg), "tp=2,dp=1", f"tp=2,dp=1,fp8={fp8}",
                       layers=1)
    assert lay.info["infer"]["fp8"] == {"format": fp8, "quantized": 4,
                                        "left": 0}
    quantized = sorted(t.name for t in lay.tensors if t.dst.quant)
    assert quantized == ["model.layers.0.mlp.down_proj.weight",
                         "model.layers.0.mlp.gate_up_proj.weight",
                         "model.layers.0.self_attn.o_proj.weight",
                         "model.layers.0.self_attn.qkv_proj.weight"]
    want = {"block": {"block": [128, 128]}, "mx": {"mx": 32},
            "ue8m0": {"block": [128, 128], "scale_fmt": "ue8m0"}}[fp8]
    assert all(t.dst.quant == want for t in lay.tensors if t.dst.quant)
    assert "all correct" in tools.check(round_trip(lay))


@pytest.mark.parametrize("fp8", ["block", "ue8m0", "mx"])
def test_fp8_preset_quantizes_kv_replicated_qkv_pieces(round_trip, tmp_path,
                                                       fp8):
    """vLLM TP4 over 2 KV heads replicates each KV head on 2 ranks, so
    qkv_proj is planned as pieces (rows of each rank's fused buffer):
    each piece is FP8 too (its rows start on the buffer's 128-row blocks),
    its scales rows of weight_scale_inv, and every payload and scale
    element checks against the independent reference."""
    import json
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(dict(SMALL, num_attention_heads=4,
                                   num_key_value_heads=2)))
    lay = build_layout(str(cfg), "tp=2,dp=1", f"tp=4,dp=1,fp8={fp8}",
                       layers=1)
    pieces = [t for t in lay.tensors if "fused_into" in t.extra]
    assert pieces and all(t.dst.quant for t in pieces)
    assert lay.info["infer"]["fp8"] == {
        "format": fp8, "quantized": 3 + len(pieces), "left": 0}
    assert "all correct" in tools.check(round_trip(lay))


def test_fp8_preset_leaves_split_blocks_bf16(tmp_path):
    """A TP split that cuts a [128, 128] block (intermediate 512 over TP8:
    64 rows per rank) leaves that weight bf16, names it in the notes."""
    import json
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(dict(SMALL, num_attention_heads=8,
                                   num_key_value_heads=8, head_dim=32)))
    lay = build_layout(str(cfg), "tp=1,dp=1", "tp=8,dp=1,fp8=block",
                       layers=1)
    info = lay.info["infer"]["fp8"]
    assert info["left"] == 4 and info["quantized"] == 0, info
    assert any("stay bf16" in n for n in lay.info["notes"])


def test_fp8_preset_quantizes_on_receivers_where_trainer_cuts_blocks(
        round_trip, tmp_path):
    """Megatron TP8 cuts the [128, 128] blocks of the MLP (64 rows per
    rank) that vLLM TP1 holds whole: the weights are still FP8, quantized
    by the inference rank after a bf16 transfer, and every payload and
    scale element checks against the independent reference."""
    import json
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(dict(SMALL, num_attention_heads=8,
                                   num_key_value_heads=8, head_dim=32)))
    lay = build_layout(str(cfg), "tp=8,dp=1", "tp=1,dp=1,fp8=block",
                       layers=1)
    assert lay.info["infer"]["fp8"] == {"format": "block", "quantized": 4,
                                        "left": 0}
    js = round_trip(lay)
    report = json.loads(tools.run("reshard-compile",
                                  [js, "--emit=none", "--report=-"]))
    sides = {q["name"]: q["quantize_on"]
             for q in report["quantized"]["tensors"]}
    assert sides["model.layers.0.mlp.down_proj.weight"] == "receiver", sides
    assert report["quantized"]["on_receiver"] >= 2, report["quantized"]
    assert report["ratios"]["network_bytes_over_lower_bound"] == 1
    assert "all correct" in tools.check(js)
    assert "all correct" in tools.run("reshard-run", [js, "--check",
                                                      "--engine"])


def test_fp8_spec_errors():
    with pytest.raises(ReshardError, match="fp8='fp4'"):
        parse_infer("tp=2,fp8=fp4")


def test_the_documented_layout_specs_are_valid():
    """Every build_layout(model, train, infer) call and `plan --model M
    --source ... --dest ...` command written out in README.md and
    docs/Python.md names a layout the presets accept (the README's refit
    example once left out Qwen3's cp=2)."""
    import re
    from reshard.megatron import validate as validate_train
    from reshard.vllm import validate as validate_infer
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    call = re.compile(r'build_layout\(\s*"([^"]+)",\s*"([^"]*)",\s*"([^"]*)"')
    cli = re.compile(r'--model (\S+)[\s\\]*--source "([^"]*)"[\s\\]*'
                     r'--dest "([^"]*)"')
    found = 0
    for doc in ("README.md", os.path.join("docs", "Python.md")):
        with open(os.path.join(root, doc)) as f:
            text = f.read()
        for model, train, infer in call.findall(text) + cli.findall(text):
            if model.endswith("config.json"):
                model = os.path.join(root, model)
            m = get_model(model)
            t, i = parse_train(train), parse_infer(infer)
            assert not validate_train(m, t) + validate_infer(m, i), \
                (doc, model, train, infer)
            found += 1
    assert found >= 3


def test_bad_arguments_to_the_builders_are_named():
    """Arguments of the wrong kind get a ReshardError naming them, never a
    TypeError from deep inside (or an int taken as a file descriptor)."""
    from reshard.vllm import Infer
    small = dict(layers=2, scale_down=64)
    for args, kw, msg in [
            ((0, "tp=1", "tp=1"), {}, "model: give a Model, a bundled name"),
            ((None, "tp=1", "tp=1"), {}, "not None"),
            (("llama-3.1-70b", "tp=1", "tp=1"), dict(layers=2.5),
             r"layers=2.5: give an integer"),
            (("llama-3.1-70b", "tp=1", "tp=1"), dict(small, scale_down=None),
             "scale_down=None: give an integer"),
            (("llama-3.1-70b", "tp=1", "tp=1"), dict(small, colocated="yes"),
             "colocated='yes': give True or False"),
            (("llama-3.1-70b", "tp=1", "tp=1"),
             dict(small, infer_first_rank=-1), "give a rank >= 0"),
            (("llama-3.1-70b", "tp=1", "tp=1"), dict(small, scenario=3),
             "scenario=3: give a name")]:
        with pytest.raises(ReshardError, match=msg):
            build_layout(*args, **kw)
    np = pytest.importorskip("numpy")
    lay = build_layout("llama-3.1-70b", "tp=1", "tp=1", layers=np.int64(2),
                       scale_down=np.int64(64))
    assert json.loads(json_of(lay))["scenario"]["layers"] == 2
    for spec, msg in [("tp=1_0", "tp='1_0' is not an integer"),
                      ("tp=\u0668", "is not an integer"),
                      ("pp=2,stages=1_0:2", "give layer counts"),
                      ("dp=100000000", "100,000,000 ranks: more than the"),
                      ("pp=2,layout=Et*99999999999|L", "is too long"),
                      ("layout=E(tt|)*4294967296L", "is too long")]:
        with pytest.raises(ReshardError, match=msg):
            parse_train(spec)
    for kw, msg in [(dict(ep=1.0), "ep=1.0: give True or False"),
                    (dict(spmoe=0.0), "spmoe=0.0: give None"),
                    (dict(tp=2, engines=10**9), "ranks: more than"),
                    (dict(pp=1, stages={4: 4}), "must be layer counts"),
                    (dict(ep=True, expert_map={3: 1}), "physical_to_logical")]:
        with pytest.raises(ReshardError, match=msg):
            Infer(**kw)
    assert Infer(ep=np.True_).ep is True and Infer(ep=1).ep is True
