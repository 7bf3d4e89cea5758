"""The Megatron preset's linear_qkv order against Megatron's own code:
Megatron-Bridge's merge_qkv_weights / merge_qkv_biases (the HF -> Megatron
conversion) on index-valued tensors, chunked over TP as its
ColumnParallelMapping does; and a torch rendering of Megatron-Core's
SelfAttention.get_query_key_value_tensors, which must recover every rank's
q, k and v heads from the TP shards the layout gives (groups < TP too)."""
import importlib
import importlib.util
import json
import os
import sys
import types
import warnings

import pytest

from reshard.refit import build_layout

from orders_ref import TINY_QWEN3_5, TINY_QWEN3_NEXT, rows_by_rank, small

torch = pytest.importorskip("torch",
                            reason="needs torch (bench/setup-bench.sh)")

CASES = [
    # (nq, nkv, hd, gated, tp)
    (8, 4, 4, False, 2),                # groups > tp
    (8, 4, 4, False, 4),                # groups == tp
    (8, 2, 4, False, 4),                # groups < tp
    (8, 1, 4, False, 8),
    (64, 4, 2, False, 8),               # Qwen3-235B-A22B's heads at tp 8
    (8, 2, 4, True, 2),
    (8, 2, 4, True, 4),                 # gated, groups < tp
    (16, 2, 8, True, 8),
]


def preset_shards(nq, nkv, hd, gated, tp, what="weight"):
    """(the JSON's linear_qkv order, each Megatron TP rank's rows)."""
    lay = build_layout(small(nq, nkv, hd, gated, bias=True), f"tp={tp}",
                       "tp=1", layers=1)
    d = json.loads(json.dumps(lay.to_dict()))
    t = next(t for t in d["tensors"]
             if t["name"] == f"model.layers.0.self_attn.qkv_proj.{what}")
    by_rank = rows_by_rank(d, t, "src")
    return t["src"]["order"]["0"], [by_rank[r] for r in range(tp)]


def hf_tensors(nq, nkv, hd, gated, hidden, bias):
    """HF q_proj ([q_h; gate_h] per head when gated), k_proj, v_proj whose
    rows hold their logical row id ([q; gate; k; v]) times `hidden` plus
    the column: exact in float64, and every element distinct."""
    q = torch.arange(nq * hd)
    parts = [q.view(nq, 1, hd)]
    if gated:
        parts.append((nq * hd + q).view(nq, 1, hd))
    q_proj = torch.cat(parts, 1).reshape(-1)
    k0 = nq * hd * (1 + gated)
    k = torch.arange(k0, k0 + nkv * hd)
    v = k + nkv * hd
    if bias:
        return [x.double() for x in (q_proj, k, v)]
    cols = torch.arange(hidden)
    return [(x[:, None] * hidden + cols).double() for x in (q_proj, k, v)]


@pytest.fixture(scope="module")
def bridge():
    """Megatron-Bridge's param_mapping module, loaded without its package
    __init__ (which needs transformer_engine, transformers and more): only
    megatron.core, importable on CPU, and stand-ins for rich and
    transformers, which the module names but merge_qkv_* do not use."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")         # "TE not installed"
            import megatron.core  # noqa: F401
            from megatron.core.transformer.transformer_config import \
                TransformerConfig
    except Exception as e:
        pytest.skip(f"megatron-core not importable ({e}); "
                    f"bench/setup-bench.sh installs it")
    root = os.path.dirname(os.path.dirname(megatron.core.__file__))
    path = os.path.join(root, "bridge", "models", "conversion")
    if not os.path.isfile(os.path.join(path, "param_mapping.py")):
        pytest.skip("megatron-bridge not installed (bench/setup-bench.sh "
                    "installs it with --no-deps)")
    before = dict(sys.modules)
    for name, attrs in (("rich", {}), ("rich.table", {"Table": object}),
                        ("transformers", {}),
                        ("transformers.configuration_utils",
                         {"PretrainedConfig": object})):
        try:
            importlib.import_module(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)
            sys.modules[name].__dict__.update(attrs)
    try:
        mods = {}
        for mod in ("utils", "param_mapping"):
            full = f"megatron.bridge.models.conversion.{mod}"
            spec = importlib.util.spec_from_file_location(
                full, os.path.join(path, mod + ".py"))
            mods[mod] = importlib.util.module_from_spec(spec)
            sys.modules[full] = mods[mod]
            spec.loader.exec_module(mods[mod])
    except Exception as e:
        pytest.skip(f"Megatron-Bridge's param_mapping.py does not load "
                    f"here ({type(e).__name__}: {e})")
    finally:
        # Leave no stand-ins behind for other tests.
        for name in set(sys.modules) - set(before):
            if name.startswith(("rich", "transformers",
                                "megatron.bridge")):
                del sys.modules[name]
    return mods["param_mapping"], TransformerConfig


@pytest.mark.parametrize("what", ["weight", "bias"])
@pytest.mark.parametrize("nq,nkv,hd,gated,tp", CASES)
def test_order_is_megatron_bridges_merge(bridge, nq, nkv, hd, gated, tp,
                                         what):
    pm, TransformerConfig = bridge
    hidden = 16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # its own deprecations
        cfg = TransformerConfig(
            num_layers=1, hidden_size=hidden, num_attention_heads=nq,
            num_query_groups=nkv, kv_channels=hd,
            attention_output_gate=gated, use_cpu_initialization=True)
    bias = what == "bias"
    q, k, v = hf_tensors(nq, nkv, hd, gated, hidden, bias)
    merged = (pm.merge_qkv_biases if bias else pm.merge_qkv_weights)(
        cfg, q, k, v)
    ids = merged if bias else merged[:, 0] / hidden
    ids = [int(x) for x in ids]
    order, rows = preset_shards(nq, nkv, hd, gated, tp, what)
    assert [a + j for a, n in order for j in range(n)] == ids
    # ColumnParallelMapping: torch.chunk(merged, tp, dim=0)[rank].
    for r, shard in enumerate(torch.chunk(merged, tp, 0)):
        want = shard if bias else shard[:, 0] / hidden
        assert rows[r] == [int(x) for x in want], r


@pytest.mark.parametrize("nk,nv,tp", [(4, 8, 1), (4, 8, 2), (4, 8, 4),
                                     (2, 6, 2), (16, 32, 8)])
def test_gdn_in_proj_is_megatron_bridges_merge(bridge, tmp_path, nk, nv,
                                               tp):
    """Qwen3-Next's GatedDeltaNet: each Megatron TP rank's in_proj rows
    (in_proj_qkvz's, then in_proj_ba's, by the layout) are those of
    Megatron-Bridge's merge_gdn_linear_weights, chunked over TP."""
    pm, _ = bridge
    cfg = dict(TINY_QWEN3_NEXT, linear_num_key_heads=nk,
               linear_num_value_heads=nv, linear_key_head_dim=2,
               linear_value_head_dim=3, num_attention_heads=8,
               num_key_value_heads=8)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    lay = build_layout(str(tmp_path / "config.json"), f"tp={tp}", "tp=1",
                       layers=1)
    d = json.loads(json.dumps(lay.to_dict()))
    rows = {}
    for part in ("qkvz", "ba"):
        t = next(t for t in d["tensors"] if t["name"] ==
                 f"model.layers.0.linear_attn.in_proj_{part}.weight")
        rows[part] = rows_by_rank(d, t, "src")
    hidden = 1
    n_qkvz = 2 * nk * 2 + 2 * nv * 3
    qkvz = torch.arange(n_qkvz, dtype=torch.float64).view(-1, hidden)
    ba = torch.arange(n_qkvz, n_qkvz + 2 * nv,
                      dtype=torch.float64).view(-1, hidden)
    provider = types.SimpleNamespace(
        hidden_size=hidden, linear_key_head_dim=2, linear_value_head_dim=3,
        linear_num_key_heads=nk, linear_num_value_heads=nv)
    merged = pm.merge_gdn_linear_weights(provider, qkvz, ba, tp_size=tp)
    for r, shard in enumerate(torch.chunk(merged[:, 0], tp)):
        want = [int(x) for x in shard]
        assert rows["qkvz"][r] + [n_qkvz + x for x in rows["ba"][r]] == \
            want, r


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_gdn_rows_of_each_vllm_rank_and_conv1d(tmp_path, tp):
    """vLLM's Qwen3-Next (qwen3_next.py): TP rank r holds the contiguous
    rows r·n/tp.. of in_proj_qkvz and in_proj_ba (whole key groups); conv1d
    its q, k and v channels (mamba_v2_sharded_weight_loader, and Megatron-
    Bridge's GDNConv1dMapping for Megatron's rank r alike)."""
    nk, nv, dk, dv = 4, 8, 2, 3
    cfg = dict(TINY_QWEN3_NEXT, linear_num_key_heads=nk,
               linear_num_value_heads=nv, linear_key_head_dim=dk,
               linear_value_head_dim=dv)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    lay = build_layout(str(tmp_path / "config.json"), f"tp={tp}",
                       f"tp={tp}", layers=1)
    d = json.loads(json.dumps(lay.to_dict()))
    first = lay.info["infer"]["ranks"][0]

    def rows(part, side):
        t = next(t for t in d["tensors"] if t["name"] ==
                 f"model.layers.0.linear_attn.{part}")
        return rows_by_rank(d, t, side)
    kd, vd = nk * dk, nv * dv
    for name, n in (("in_proj_qkvz.weight", 2 * kd + 2 * vd),
                    ("in_proj_ba.weight", 2 * nv)):
        got = rows(name, "dst")
        for r in range(tp):
            assert got[first + r] == list(range(r * n // tp,
                                                (r + 1) * n // tp)), name
    for side, base in (("src", 0), ("dst", first)):
        got = rows("conv1d.weight", side)
        for r in range(tp):
            q = list(range(r * kd // tp, (r + 1) * kd // tp))
            v = range(2 * kd + r * vd // tp, 2 * kd + (r + 1) * vd // tp)
            assert got[base + r] == q + [kd + x for x in q] + list(v), side


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_qwen3_5_gdn_rows_of_each_rank(tmp_path, tp):
    """Qwen3.5's flat Gated DeltaNet projections: vLLM's in_proj_qkvz
    (MergedColumnParallelLinear of [q, k, v, z]) and Megatron's in_proj
    (Megatron-Bridge's GDNLinearMappingSeparate) both hold rank r's slice
    of each part, [q_r; k_r; v_r; z_r] and [b_r; a_r]."""
    nk, nv, dk, dv = 4, 8, 2, 3
    cfg = json.loads(json.dumps(TINY_QWEN3_5))
    cfg["text_config"].update(linear_num_key_heads=nk,
                              linear_num_value_heads=nv,
                              linear_key_head_dim=dk, linear_value_head_dim=dv)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    lay = build_layout(str(tmp_path / "config.json"), f"tp={tp}",
                       f"tp={tp}", layers=1)
    d = json.loads(json.dumps(lay.to_dict()))
    first = lay.info["infer"]["ranks"][0]
    kd, vd = nk * dk, nv * dv

    def mine(parts, r):
        out, at = [], 0
        for n in parts:
            out += range(at + r * n // tp, at + (r + 1) * n // tp)
            at += n
        return out
    for name, parts in (("in_proj_qkvz.weight", [kd, kd, vd, vd]),
                        ("in_proj_ba.weight", [nv, nv])):
        t = next(t for t in d["tensors"] if t["name"] ==
                 f"model.layers.0.linear_attn.{name}")
        for side, base in (("src", 0), ("dst", first)):
            got = rows_by_rank(d, t, side)
            for r in range(tp):
                assert got[base + r] == mine(parts, r), (name, side, r)


@pytest.mark.parametrize("nq,nkv,hd,gated,tp", CASES)
def test_get_query_key_value_tensors_recovers_every_head(nq, nkv, hd,
                                                         gated, tp):
    """Megatron-Core attention.py, SelfAttention.__init__ and
    get_query_key_value_tensors, on the rows each TP rank holds: with
    fewer groups than ranks, all-gather the shards and take the rank's
    group; view as [groups, per-group rows]; split into q (gate), k, v;
    take the rank's query heads."""
    _, rows = preset_shards(nq, nkv, hd, gated, tp)
    shards = [torch.tensor(r) for r in rows]
    hpg = nq // nkv
    per_group = (hpg * (1 + gated) + 2) * hd
    gate0, k0 = nq * hd, nq * hd * (1 + gated)
    for rank in range(tp):
        mixed = shards[rank]
        if nkv < tp:
            mixed = torch.cat(shards)                   # the all-gather
            idx = rank // (tp // nkv)
            size = mixed.numel() // nkv
            mixed = mixed[idx * size:(idx + 1) * size]
            groups, heads = [idx], list(range(idx * hpg, (idx + 1) * hpg))
        else:
            groups = list(range(rank * nkv // tp, (rank + 1) * nkv // tp))
            heads = list(range(rank * nq // tp, (rank + 1) * nq // tp))
        split = [hpg * hd] * (1 + gated) + [hd, hd]
        parts = torch.split(mixed.view(len(groups), per_group), split, 1)
        query, key, value = parts[0], parts[-2], parts[-1]
        query = query.reshape(-1, hd)
        if nkv < tp:
            sub = tp // nkv
            size = hpg // sub
            query = query[rank % sub * size:(rank % sub + 1) * size]
            mine = heads[rank % sub * size:(rank % sub + 1) * size]
        else:
            mine = heads
        assert query.tolist() == [list(range(h * hd, (h + 1) * hd))
                                  for h in mine]
        assert key.reshape(-1).tolist() == [k0 + g * hd + j for g in groups
                                            for j in range(hd)]
        assert value.reshape(-1).tolist() == [k0 + (nkv + g) * hd + j
                                              for g in groups
                                              for j in range(hd)]
        if gated:
            # The gates of the rank's group(s), unsliced, as Megatron-Core
            # returns them.
            assert parts[1].reshape(-1).tolist() == [
                gate0 + h * hd + j for h in heads for j in range(hd)]
