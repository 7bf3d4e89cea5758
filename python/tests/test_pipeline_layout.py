"""Megatron-Core's --pipeline-model-parallel-layout (Train's layout=):
what each virtual stage holds, checked against megatron-core's own
PipelineParallelLayerLayout on Megatron-Bridge's recipes and on random
layouts, accepted and refused alike; the presets built from it."""
import random
import types

import pytest

from reshard.errors import ReshardError
from reshard.megatron import PipelineLayout, Train, parse_train
from reshard.refit import build_layout


def megatron_chunks(spec, pp):
    """[pp rank][chunk] -> decoder layer ids by megatron-core, or the
    error it raises (its checks are assertions)."""
    core = pytest.importorskip("megatron.core.transformer."
                               "pipeline_parallel_layer_layout")
    from megatron.core import parallel_state as ps
    from megatron.core.transformer.enums import LayerType
    try:
        lay = core.PipelineParallelLayerLayout(spec, pp)
        flat = lay.flatten_layout
        mtp = flat.count(LayerType.mtp)
        lay.validate_layer_layout(num_layers=flat.count(LayerType.decoder),
                                  mtp_num_layers=mtp or None)
    except (AssertionError, ValueError, KeyError) as e:
        return e
    vpp = lay.virtual_pipeline_model_parallel_size
    old = ps.get_virtual_pipeline_model_parallel_world_size()
    ps.set_virtual_pipeline_model_parallel_world_size(vpp)
    try:
        return [[lay.get_layer_id_list(vp_stage=v, pp_rank=p)
                 for v in range(vpp)] for p in range(pp)]
    finally:
        ps.set_virtual_pipeline_model_parallel_world_size(old)


def ours(spec, pp):
    try:
        return PipelineLayout.parse(spec, pp).chunk_layers()
    except ReshardError as e:
        return e


def bridge_dsv3(pp, vpp, mtp=1):
    """Megatron-Bridge's DeepSeek-V3 layouts (recipes/deepseek/
    deepseek_v3.py, set_deepseek_v3_pipeline_model_parallel_layout)."""
    last = ["mtp"] * mtp + ["loss"]
    return {
        (4, 1): [["embedding"] + ["decoder"] * 16, ["decoder"] * 16,
                 ["decoder"] * 16, ["decoder"] * 13 + last],
        (8, 1): [["embedding"] + ["decoder"] * 8] + [["decoder"] * 8] * 6
        + [["decoder"] * 5 + last],
        (16, 1): [["embedding"] + ["decoder"] * 4] + [["decoder"] * 4] * 14
        + [["decoder"] + last]}.get((pp, vpp)) or {
        (4, 2): bridge_dsv3(8, 1, mtp), (8, 2): bridge_dsv3(16, 1, mtp),
        (4, 4): bridge_dsv3(16, 1, mtp)}[(pp, vpp)]


@pytest.mark.parametrize("pp,vpp", [(4, 1), (8, 1), (16, 1), (4, 2), (8, 2),
                                    (4, 4)])
@pytest.mark.parametrize("mtp", [0, 1])
def test_bridge_deepseek_v3_layouts_match_megatron(pp, vpp, mtp):
    spec = bridge_dsv3(pp, vpp, mtp)
    want = megatron_chunks(spec, pp)
    assert not isinstance(want, Exception), want
    t = Train(tp=2, pp=pp, dp=8, layout=spec)
    assert t.vpp == vpp
    assert t.layout.chunk_layers() == want
    if (pp, vpp, mtp) != (8, 2, 1):
        return                          # (a preset takes a second or two)
    lay = build_layout("deepseek-v3", t, "tp=8", scale_down=64)
    assert lay.info["train"]["layers_per_stage"] == \
        [sum(map(len, c)) for c in want]
    assert lay.info["train"]["chunk_layers"] == \
        [[[c[0], c[-1]] if c else [] for c in chunks] for chunks in want]


@pytest.mark.parametrize("spec,pp", [
    ("Et*3|(tt|)*29,m|L", 16),          # Megatron's documented example
    ("Et|(tt|)*2,tL", 2), ("Ett||ttt|tttL", 2), ("EtttmL", 1),
    ("Et*2|t*3,|,t*2L", 3), ("E|(t|)*4L", 3)])
def test_strings_match_megatron(spec, pp):
    want = megatron_chunks(spec, pp)
    assert not isinstance(want, Exception), want
    assert ours(spec, pp) == want


def random_layout(rng):
    """(string, pp): a layout, often valid, sometimes broken one way."""
    pp, vpp = rng.randint(1, 4), rng.randint(1, 3)
    stages = ["t" * rng.choice([0, 1, 1, 2, 3]) for _ in range(pp * vpp)]
    stages[0] = "E" + stages[0]
    stages[-1] += "L"
    if rng.random() < 0.4:          # MTP layers, usually where allowed
        i = len(stages) - 1 - rng.randrange(pp) if rng.random() < 0.8 \
            else rng.randrange(len(stages))
        stages[i] = stages[i].replace("L", "") + "m" * rng.randint(1, 2) + \
            ("L" if "L" in stages[i] else "")
    broken = rng.random()
    if broken < 0.05:
        stages[0] = stages[0][1:]                   # no embedding
    elif broken < 0.1:
        stages[rng.randrange(len(stages))] += "L"   # a second loss
    elif broken < 0.15:
        stages.append("t")                          # pp does not divide
    elif broken < 0.2:
        stages[-1] = "m" + stages[-1]               # mtp before a decoder?
    elif broken < 0.22:
        stages[0] += "x"                            # not a layer
    elif broken < 0.25:
        stages[-1] = stages[-1].replace("L", "") + "Lt"   # loss not last
    return render(stages, rng), pp


def render(stages, rng):
    """Megatron's syntax: repeats '(..|)*n' and 'x*n', cosmetic commas."""
    out, i = [], 0
    while i < len(stages):
        k = 1
        while i + k < len(stages) - 1 and stages[i + k] == stages[i]:
            k += 1
        s = stages[i]
        if len(s) >= 3 and len(set(s)) == 1 and rng.random() < 0.5:
            s = f"{s[0]}*{len(s)}"
        if k > 1 and stages[i] and rng.random() < 0.7:
            out.append(f"({s}|)*{k}")
            i += k
            continue
        out.append(s + ("|" if i < len(stages) - 1 else ""))
        i += 1
    return ("," if rng.random() < 0.3 else "").join(out)


def test_random_layouts_match_megatron():
    rng = random.Random(20261205)
    accepted = refused = 0
    for _ in range(400):
        spec, pp = random_layout(rng)
        want, got = megatron_chunks(spec, pp), ours(spec, pp)
        if isinstance(want, Exception):
            assert isinstance(got, ReshardError), (spec, pp, got)
            refused += 1
        else:
            assert got == want, (spec, pp)
            accepted += 1
    assert accepted > 150 and refused > 50, (accepted, refused)


def test_spec_strings_and_errors():
    t = parse_train("megatron:tp=2,pp=16,layout=Et*3|(tt|)*29,m|L,ep=8,"
                    "dp=4")
    assert (t.vpp, t.ep, t.dp) == (2, 8, 4)
    assert t.layout.final_norm_rank() == 13     # layer 60; MTP on pp 14
    assert t.layout.chunk_layers()[13] == [[27, 28], [59, 60]]
    assert Train(pp=2, vpp=2, layout="Et|t|t|tL").vpp == 2
    for spec, msg in [
            ("pp=2,vpp=3,layout=Et|t|t|tL", r"vpp=3, but layout= has 4 "
             r"stages, vpp=2 for pp=2"),
            ("pp=2,first=1,last=1,layout=Et|tL", "drop first=/last="),
            ("pp=2,stages=1:1,layout=Et|tL", "stages="),
            ("pp=2,layout=Et|t|tL",
             "'Et|t|tL' has 3 stages, not a multiple of pp=2"),
            ("pp=2,layout=Et|((t|)*2)*2L", "no nesting"),
            ("pp=2,layout=Et|tLt", "E must come first and L last"),
            ("pp=1,layout=tEL", "E must come first"),
            ("pp=2,layout=Et|mtL", r"decoder layers \(t\) must come before"),
            ("pp=2,layout=Etm|mL", r"MTP layers \(m\) must be in one"),
            ("pp=2,layout=Et|tm||L", "last model chunk of their pipeline"),
            ("pp=2,layout=", "layout= is empty"),
            ("tp=1,layout=Et|tL", r"2 stages for pp=1: virtual pipeline "
             r"stages need pp >= 2"),
    ]:
        with pytest.raises(ReshardError, match=msg):
            parse_train(spec)
    # Bridge's list, pasted as text (Python's repr or JSON).
    spec = str([["embedding", "decoder"], ["decoder", "loss"]])
    assert parse_train(f"pp=2,layout={spec}").layout.stages == ("Et", "tL")
    assert parse_train('pp=2,layout=[["embedding"], ["decoder", "loss"]]'
                       ).layout.stages == ("E", "tL")
    with pytest.raises(ReshardError, match="not a list of lists"):
        parse_train("pp=2,layout=[[embedding]]")
    with pytest.raises(ReshardError, match="'encoder' is not one of"):
        Train(layout=[["embedding", "encoder", "loss"]])
    with pytest.raises(ReshardError, match="must be a string"):
        Train(layout=7)
    # Megatron's LayerType values are taken by name.
    lt = types.SimpleNamespace
    assert Train(layout=[[lt(name="embedding"), lt(name="decoder"),
                          lt(name="loss")]]).layout.stages == ("EtL",)
    # MTP layers without a decoder layer (--layers 0): the final norm
    # stays with the loss.
    assert PipelineLayout.parse("E|mL", 2).final_norm_rank() == 1
    with pytest.raises(ReshardError, match="holds 2 decoder layers"):
        build_layout("llama-3.1-70b", "tp=8,pp=2,layout=Et|tL", "tp=8",
                     layers=4, scale_down=64)


def test_account_for_embedding_and_loss_with_vpp_as_a_layout():
    """Megatron's account_for_embedding/loss_in_pipeline_split with
    virtual stages is the layout whose first (last) virtual stage gives
    one layer's place to E (L): every chunk starts where megatron-core's
    get_transformer_layer_offset puts it (docs/Python.md)."""
    offset = pytest.importorskip(
        "megatron.core.transformer.transformer_layer"
    ).get_transformer_layer_offset
    for pp, vpp, emb, loss in [(2, 2, 1, 1), (4, 2, 1, 1), (2, 3, 1, 0),
                               (3, 2, 0, 1), (4, 3, 1, 1)]:
        n = 3                                   # places per virtual stage
        layers = pp * vpp * n - emb - loss
        stages = ["t" * n] * (pp * vpp)
        stages[0] = "E" * emb + "t" * (n - emb) if emb else "E" + stages[0]
        stages[-1] = "t" * (n - loss) + "L"
        t = Train(pp=pp, layout="|".join(stages))
        cfg = types.SimpleNamespace(
            num_layers=layers, pipeline_model_parallel_size=pp,
            pipeline_model_parallel_layout=None,
            num_layers_in_first_pipeline_stage=None,
            num_layers_in_last_pipeline_stage=None,
            virtual_pipeline_model_parallel_size=vpp,
            account_for_embedding_in_pipeline_split=bool(emb),
            account_for_loss_in_pipeline_split=bool(loss))
        for p, chunks in enumerate(t.layout.chunk_layers()):
            assert [c[0] for c in chunks] == \
                [offset(cfg, v, p) for v in range(vpp)], (pp, vpp, emb, loss)


def test_a_layout_plans_exactly(round_trip):
    """A pipeline layout with an empty chunk and MTP (the final norm on
    another rank than the output layer), planned and executed element by
    element (reshard-run --check)."""
    from reshard import tools
    lay = build_layout("deepseek-v3", "tp=2,pp=2,ep=2,layout=Ett||ttttt|mL",
                       "tp=2,dp=2,ep=1", layers=7, scale_down=64)
    src = {t.name: t.src.mesh.name for t in lay.tensors}
    assert src["model.norm.weight"] == "train_pp0"     # with layer 6
    assert src["lm_head.weight"] == "train_pp1"
    assert "all correct" in tools.check(round_trip(lay))
