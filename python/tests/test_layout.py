"""DeviceMesh, placements and local shapes (DESIGN.md semantics: nested
torch.chunk, blocks per device), the JSON and .mlir writers."""
import io
import json

import pytest

from reshard import DeviceMesh, Layout, Replicate, Shard, Sharding
from reshard.errors import ReshardError


def test_mesh_coords_row_major():
    m = DeviceMesh([2, 3], ["dp", "tp"], ranks=range(10, 16))
    assert m.coords(10) == (0, 0)
    assert m.coords(14) == (1, 1)
    assert m.coords(3) is None


@pytest.mark.parametrize("args,msg", [
    (([2], ["a", "b"]), "1 dims but 2 axis names"),
    (([2, 2], ["a", "a"]), "duplicate axis names"),
    (([2], ["a"], [0]), "has 2 devices but 1 ranks"),
    (([2], ["a"], [1, 1]), "distinct"),
])
def test_mesh_errors(args, msg):
    with pytest.raises(ReshardError, match=msg):
        DeviceMesh(*args)


def test_uneven_nested_chunks():
    # 10 over a (3): chunks 4, 4, 2; each over b (2): 2+2, 2+2, 1+1.
    m = DeviceMesh([3, 2], ["a", "b"])
    s = Sharding(m, [["a", "b"]])
    assert [s.local_shape([10], r)[0] for r in range(6)] == [2, 2, 2, 2, 1, 1]
    # torch.chunk(5, 4): 2, 2, 1, 0.
    s = Sharding(DeviceMesh([4], ["x"]), [["x"]])
    assert [s.local_shape([5], r)[0] for r in range(4)] == [2, 2, 1, 0]


def test_blocks_are_chunked_one_by_one():
    m = DeviceMesh([2, 4], ["dp", "tp"])
    s = Sharding(m, [["tp"], []], blocks={0: [32, 8, 8]})
    assert s.local_shape([48, 32], 0) == [8 + 2 + 2, 32]
    assert s.local_shape([48, 32], 7) == [12, 32]


def test_placements_in_dtensor_order():
    m = DeviceMesh([2, 4], ["dp", "tp"])
    s = Sharding.from_placements(m, [Shard(0), Shard(0)], 2)
    assert s.dims == [["dp", "tp"], []]
    s = Sharding.from_placements(m, [Replicate(), Shard(-1)], 2)
    assert s.dims == [[], ["tp"]]
    with pytest.raises(ReshardError, match="2 placements for a 1-D mesh"):
        Sharding.from_placements(DeviceMesh([2], ["x"]),
                                 [Shard(0), Shard(0)], 1)
    with pytest.raises(ReshardError, match="Shard\\(2\\) of a 2-D tensor"):
        Sharding.from_placements(m, [Shard(2), Replicate()], 2)


def test_sharding_errors():
    m = DeviceMesh([2], ["tp"])
    with pytest.raises(ReshardError, match="unknown mesh axis 'dp'"):
        Sharding(m, [["dp"]])
    with pytest.raises(ReshardError, match="used twice"):
        Sharding(m, [["tp"], ["tp"]])


def small_layout():
    train = DeviceMesh([2, 4], ["dp", "tp"], range(8), name="train")
    infer = DeviceMesh([2], ["tp"], [8, 9])
    lay = Layout(topology="dgx-h100")
    blocks = {0: [32, 8, 8]}
    lay.add("model.layers.0.self_attn.qkv_proj.weight", [48, 32], "bf16",
            Sharding.from_placements(train, [Replicate(), Shard(0)], 2,
                                     blocks),
            Sharding.from_placements(infer, [Shard(0)], 2, blocks))
    lay.add("model.layers.0.mlp.down_proj.weight", [32, 64], "bf16",
            Sharding(train, [[], ["tp"]]), Sharding(infer, [[], ["tp"]]))
    return lay


def test_json_round_trip():
    f = io.StringIO()
    small_layout().write_json(f)
    d = json.loads(f.getvalue())
    assert d["meshes"]["train"]["ranks"] == list(range(8))
    assert d["meshes"]["mesh0"] == {"shape": [2], "axes": ["tp"],
                                    "ranks": [8, 9]}
    t = d["tensors"][0]
    assert t["src"] == {"mesh": "train", "dims": [["tp"], []],
                        "blocks": {"0": [32, 8, 8]}}
    assert d["topology"]["nvl_domain_size"] == 8
    assert f.getvalue().count("\n") == 8       # one mesh, one tensor a line


def test_mlir_text():
    text = small_layout().to_mlir()
    assert ('reshard.mesh @train shape = [2, 4] axes = ["dp", "tp"] '
            'ranks = [0, 1, 2, 3, 4, 5, 6, 7]') in text
    assert ('reshard.redistribute @"model.layers.0.self_attn.qkv_proj.weight"'
            ' from @train <[[tp] blocks [32, 8, 8], []]> to @mesh0 '
            '<[[tp] blocks [32, 8, 8], []]> topology @topology : '
            'tensor<48x32xbf16> -> tensor<48x32xbf16>') in text
    assert "nic_latency_us = 5.0" in text


def test_same_name_different_meshes():
    lay = Layout()
    a = DeviceMesh([2], ["x"], name="m")
    b = DeviceMesh([2], ["x"], [4, 5], name="m")
    lay.add("t", [4], "bf16", Sharding(a, [["x"]]), Sharding(b, [["x"]]))
    with pytest.raises(ReshardError, match="two different meshes"):
        lay.to_dict()


def test_bad_dtype():
    m = DeviceMesh([1], ["x"])
    with pytest.raises(ReshardError, match="unknown dtype 'f32'"):
        Layout().add("t", [4], "f32", Sharding(m, [[]]), Sharding(m, [[]]))
