"""Property test of quantized destinations: random meshes (up to 3-D),
tensors (up to 3-D, uneven sizes, short last blocks), block scaling with
random block sizes (fp32 or power-of-two ue8m0 scales) and MXFP8,
bf16/fp16/fp32 sources with fused blocks and storage orders, replicated
and sharded sides, beside plain tensors.
Half the sources keep fused blocks and order runs on the block grid, half
cut them anywhere, so both places of quantizing occur. Each layout runs
through reshard-run --check with the piece interpreter and with the
execution engine (the MPI backend's code), every payload and scale
element compared with the independent reference of
lib/Reference/QuantReference.cpp. A destination is kept only when every
shard holds whole blocks (the verifier's rule). The compiled report must
quantize a tensor on its senders exactly when every source shard holds
whole blocks and its order runs start on blocks (checked here by the
Python front end, independently of the tools), and move exactly the
lower bound of network bytes.
"""
import json
import random

import pytest

from reshard import tools
from reshard.layout import DeviceMesh, Sharding

CASES = 60


def random_mesh(rng, name, first):
    shape = rng.choice([[2], [3], [2, 2], [4], [2, 1, 2], [1, 3]])
    n = 1
    for s in shape:
        n *= s
    ranks = list(range(first, first + n))
    rng.shuffle(ranks)
    axes = [f"{name}{i}" for i in range(len(shape))]
    return {"shape": shape, "axes": axes, "ranks": ranks}


def random_side(rng, mesh, shape, blocks, fuse, order, aligned=True):
    dims = [[] for _ in shape]
    for axis in mesh["axes"]:
        if shape and rng.random() < 0.7:
            dims[rng.randrange(len(shape))].append(axis)
    side = {"mesh": mesh["name"], "dims": dims}
    for d, n in enumerate(shape):
        # Off the grid, a "block" of the cuts below is one element.
        b = blocks[d] if aligned else 1
        whole = n // b
        if fuse and whole >= 2 and rng.random() < 0.4:
            cut = b * rng.randrange(1, whole)
            side.setdefault("blocks", {})[str(d)] = [cut, n - cut]
        if order and whole >= 2 and rng.random() < 0.5:
            runs, at = [], 0
            while at < n:
                length = min(n - at, b * rng.randrange(1, 3 if aligned
                                                        else n + 1))
                runs.append([at, length])
                at += length
            rng.shuffle(runs)
            side.setdefault("order", {})[str(d)] = runs
    return side


def senders_quantize(meshes, side, shape, blocks):
    """docs/Layout.md's rule: every source shard holds whole blocks, and
    its storage order runs start on blocks (the scales follow them); runs
    that continue one another are one run."""
    for d, runs in side.get("order", {}).items():
        d = int(d)
        merged = []
        for a, n in runs:
            if merged and merged[-1][0] + merged[-1][1] == a:
                merged[-1][1] += n
            else:
                merged.append([a, n])
        for a, n in merged:
            if a % blocks[d] or ((a + n) % blocks[d] and a + n != shape[d]):
                return False
    return holds_whole_blocks(meshes, side, shape, blocks)


def holds_whole_blocks(meshes, side, shape, blocks):
    m = meshes[side["mesh"]]
    mesh = DeviceMesh([m["ranks"][i] for i in range(len(m["ranks"]))],
                      m["axes"], name=side["mesh"]) if len(m["shape"]) == 1 \
        else DeviceMesh(_nest(m["ranks"], m["shape"]), m["axes"],
                        name=side["mesh"])
    s = Sharding(mesh, side["dims"], side.get("blocks"), side.get("order"))
    return s.holds_whole_blocks(shape, blocks)


def _nest(flat, shape):
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0]
    return [_nest(flat[i * step:(i + 1) * step], shape[1:])
            for i in range(shape[0])]


def random_layout(seed):
    rng = random.Random(seed)
    meshes = {"a": random_mesh(rng, "a", 0)}
    # Disjoint, colocated or overlapping destination ranks.
    first = rng.choice([0, 1, len(meshes["a"]["ranks"])])
    meshes["b"] = random_mesh(rng, "b", first)
    for name, m in meshes.items():
        m["name"] = name
    tensors = []
    while len(tensors) < 4:
        rank = rng.randrange(1, 4)
        mx = rng.random() < 0.3
        blocks = [1] * (rank - 1) + [32] if mx else \
            [rng.choice([1, 2, 4, 8]) for _ in range(rank)]
        shape = [b * rng.randrange(1, 5) - (rng.randrange(b) if
                                              rng.random() < 0.5 else 0)
                 for b in blocks]
        src = random_side(rng, meshes["a"], shape, blocks, True, True,
                          aligned=rng.random() < 0.5)
        dst = random_side(rng, meshes["b"], shape, blocks, True, False)
        if not holds_whole_blocks(meshes, dst, shape, blocks):
            continue
        dst["quant"] = {"mx": 32} if mx else {"block": blocks}
        if not mx and rng.random() < 0.3:
            dst["quant"]["scale_fmt"] = "ue8m0"  # power-of-two scales
        tensors.append({"name": f"t{len(tensors)}", "shape": shape,
                        "dtype": rng.choice(["bf16", "fp16", "fp32"]),
                        "src": src, "dst": dst})
    tensors.append({"name": "plain", "shape": [5, 3], "dtype": "bf16",
                    "src": {"mesh": "a", "dims": [[], []]},
                    "dst": {"mesh": "b", "dims": [[], []]}})
    expected = {t["name"]: "sender" if senders_quantize(
        meshes, t["src"], t["shape"], _blocks(t)) else "receiver"
        for t in tensors if "quant" in t["dst"]}
    for m in meshes.values():
        del m["name"]
    return {"meshes": meshes, "tensors": tensors}, expected


def _blocks(t):
    q = t["dst"]["quant"]
    if "mx" in q:
        return [1] * (len(t["shape"]) - 1) + [q["mx"]]
    return q["block"]


@pytest.mark.parametrize("seed", range(CASES))
def test_random_quantized_layouts(have_tools, tmp_path, seed):
    layout, expected = random_layout(seed)
    path = tmp_path / "layout.json"
    path.write_text(json.dumps(layout))
    for extra in ([], ["--engine"]):
        out = tools.run("reshard-run", [str(path), "--check"] + extra)
        assert "all correct" in out, (seed, extra, out)
    report = json.loads(tools.run("reshard-compile", [
        str(path), "--emit=none", "--report=-"]))
    got = {q["name"]: q["quantize_on"]
           for q in report["quantized"]["tensors"]}
    assert got == expected, (seed, got, expected)
    assert report["ratios"]["network_bytes_over_lower_bound"] == 1, seed


def test_both_places_occur():
    """The generator reaches both sides of the rule."""
    places = [p for seed in range(CASES)
              for p in random_layout(seed)[1].values()]
    assert places.count("sender") >= 20 and places.count("receiver") >= 20
