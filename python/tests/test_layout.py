"""DeviceMesh, placements and local shapes (docs/Layout.md semantics:
nested torch.chunk, blocks per device, storage orders), the JSON and .mlir
writers.
Constructor, dtype and deprecation details: test_mesh.py."""
import io
import json
import subprocess

import pytest

from reshard import (DeviceMesh, Layout, Replicate, Shard, Sharding,
                     init_device_mesh)
from reshard import tools
from reshard.errors import ReshardError


def test_mesh_coords_row_major():
    m = DeviceMesh([[10, 11, 12], [13, 14, 15]], ("dp", "tp"))
    assert m.coords(10) == (0, 0)
    assert m.coords(14) == (1, 1)
    assert m.coords(3) is None


@pytest.mark.parametrize("args,msg", [
    (([0, 1], ["a", "b"]), r"1-D mesh \(shape \[2\]\) but 2 mesh_dim_names"),
    (([[0, 1], [2, 3]], ["a", "a"]), "duplicate mesh_dim_names 'a'"),
    (([[0, 1], [2]], ["a", "b"]), "not rectangular"),
    (([1, 1], ["a"]), "rank 1 appears twice"),
])
def test_mesh_errors(args, msg):
    with pytest.raises(ReshardError, match=msg):
        DeviceMesh(*args)


def test_uneven_nested_chunks():
    # 10 over a (3): chunks 4, 4, 2; each over b (2): 2+2, 2+2, 1+1.
    m = init_device_mesh((3, 2), ("a", "b"))
    s = Sharding(m, [["a", "b"]])
    assert [s.local_shape([10], r)[0] for r in range(6)] == [2, 2, 2, 2, 1, 1]
    # torch.chunk(5, 4): 2, 2, 1, 0.
    s = Sharding(init_device_mesh((4,), ("x",)), [["x"]])
    assert [s.local_shape([5], r)[0] for r in range(4)] == [2, 2, 1, 0]


def test_blocks_are_chunked_one_by_one():
    m = init_device_mesh((2, 4), ("dp", "tp"))
    s = Sharding(m, [["tp"], []], blocks={0: [32, 8, 8]})
    assert s.local_shape([48, 32], 0) == [8 + 2 + 2, 32]
    assert s.local_shape([48, 32], 7) == [12, 32]


def test_placements_in_dtensor_order():
    m = init_device_mesh((2, 4), ("dp", "tp"))
    s = Sharding.from_placements(m, [Shard(0), Shard(0)], 2)
    assert s.dims == [["dp", "tp"], []]
    s = Sharding.from_placements(m, [Replicate(), Shard(-1)], 2)
    assert s.dims == [[], ["tp"]]
    with pytest.raises(ReshardError, match="2 placements for a 1-D mesh"):
        Sharding.from_placements(DeviceMesh([0, 1], ("x",)),
                                 [Shard(0), Shard(0)], 1)
    with pytest.raises(ReshardError, match="Shard\\(2\\) of a 2-D tensor"):
        Sharding.from_placements(m, [Shard(2), Replicate()], 2)
    # Placements given as dims: told where they go, not a TypeError.
    with pytest.raises(ReshardError, match="these are DTensor placements"):
        Sharding(m, [Replicate(), Shard(0)])
    for bad, msg in (("tp", "one list of mesh axis names per tensor dim"),
                     (["tp", []], r"dims\[0\]: give a list of mesh axis")):
        with pytest.raises(ReshardError, match=msg):
            Sharding(m, bad)


def test_sharding_errors():
    m = DeviceMesh([0, 1], ("tp",))
    with pytest.raises(ReshardError, match="unknown mesh axis 'dp'"):
        Sharding(m, [["dp"]])
    with pytest.raises(ReshardError, match="used twice"):
        Sharding(m, [["tp"], ["tp"]])


def small_layout():
    train = DeviceMesh([[0, 1, 2, 3], [4, 5, 6, 7]], ("dp", "tp"),
                       name="train")
    infer = DeviceMesh([8, 9], ("tp",))
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
    a = DeviceMesh([0, 1], ("x",), name="m")
    b = DeviceMesh([4, 5], ("x",), name="m")
    lay.add("t", [4], "bf16", Sharding(a, [["x"]]), Sharding(b, [["x"]]))
    with pytest.raises(ReshardError, match="two different meshes"):
        lay.to_dict()


def test_tensor_names_are_checked_when_added():
    """A duplicate, a non-string or a NUL-holding name is refused by add()
    itself, not later by the compiler at a temporary file's line."""
    m = DeviceMesh([0, 1], ("x",))
    lay = Layout()
    lay.add("t", [4], "bf16", Sharding(m, [["x"]]), Sharding(m, [[]]))
    with pytest.raises(ReshardError, match="t: a tensor of this name is "
                                           "already in the layout"):
        lay.add("t", [4], "bf16", Sharding(m, [["x"]]), Sharding(m, [[]]))
    for bad, msg in ((3, "tensor name 3: give a non-empty string"),
                     ("", "tensor name '': give a non-empty string"),
                     ("w\0x", "contains a NUL character")):
        with pytest.raises(ReshardError, match=msg):
            lay.add(bad, [4], "bf16", Sharding(m, [["x"]]),
                    Sharding(m, [[]]))
    # The list may be changed directly: the name index follows it.
    lay.tensors.clear()
    lay.add("t", [4], "bf16", Sharding(m, [["x"]]), Sharding(m, [[]]))
    assert [t.name for t in lay.tensors] == ["t"]


def test_compile_names_what_a_layout_is():
    import reshard
    for bad in (42, {"meshes": {}}):
        with pytest.raises(ReshardError, match="layout: give a "
                                               "reshard.Layout or the path"):
            reshard.compile(bad)


def test_bad_dtype():
    m = DeviceMesh([0], ("x",))
    with pytest.raises(ReshardError, match="unknown dtype 'f32'"):
        Layout().add("t", [4], "f32", Sharding(m, [[]]), Sharding(m, [[]]))


def test_hand_computed_uneven_cases():
    # 10 rows over mesh axes (2, 3), DTensor [Shard(0), Shard(0)]: 5 | 5,
    # then each 5 into 2, 2, 1 (the outer mesh dim is the major split).
    m = init_device_mesh((2, 3), ("a", "b"))
    s = Sharding.from_placements(m, [Shard(0), Shard(0)], 1)
    assert [s.local_shape([10], r)[0] for r in range(6)] == [2, 2, 1] * 2
    # Blocks [5, 3] over 2: 3 + 2 on rank 0, 2 + 1 on rank 1.
    s = Sharding(DeviceMesh([0, 1], ("x",)), [["x"]], blocks={0: [5, 3]})
    assert [s.local_shape([8], r) for r in range(2)] == [[5], [3]]


def test_blocks_must_add_up_to_the_dim():
    # Blocks [5, 5] on a dim of 8 used to give local extent 6 silently.
    m = DeviceMesh([0, 1], ("x",))
    bad = Sharding(m, [["x"]], blocks={0: [5, 5]})
    with pytest.raises(ReshardError, match=r"blocks \[5, 5\] of dim 0 must "
                                           r"be sizes >= 0 adding up"):
        Layout().add("t", [8], "bf16", bad, Sharding(m, [["x"]]))
    with pytest.raises(ReshardError, match="adding up to the dim"):
        bad.local_shape([8], 0)
    with pytest.raises(ReshardError, match="must hold integers >= 0"):
        Layout().add("t", [-1], "bf16", Sharding(m, [[]]), Sharding(m, [[]]))


def test_storage_order_segments_json_and_mlir():
    # Stored rows [0..3, 8, 9, 4..7, 10, 11], blocks [6, 6] over tp 2:
    # rank 0 gets stored 0-2 and 6-8, rank 1 stored 3-5 and 9-11.
    m = DeviceMesh([0, 1], ("tp",), name="m")
    runs = [[0, 4], [8, 2], [4, 4], [10, 2]]
    s = Sharding(m, [["tp"], []], blocks={0: [6, 6]}, order={0: runs})
    assert s.segments([12, 3], 0)[0] == ((0, 3), (4, 3))
    assert s.segments([12, 3], 1)[0] == ((3, 1), (8, 2), (7, 1), (10, 2))
    assert s.local_shape([12, 3], 1) == [6, 3]        # as without the order
    lay = Layout()
    lay.add("t", [12, 3], "bf16", s, Sharding(m, [[], ["tp"]]))
    assert lay.to_dict()["tensors"][0]["src"] == {
        "mesh": "m", "dims": [["tp"], []], "order": {"0": runs},
        "blocks": {"0": [6, 6]}}
    assert "<[[tp] order [[0, 4], [8, 2], [4, 4], [10, 2]] blocks [6, 6], " \
        "[]]>" in lay.to_mlir()
    # Empty runs count for nothing, wherever they start.
    ok = Sharding(m, [["tp"]], order={0: [[9, 0], [2, 2], [0, 2]]})
    assert ok.segments([4], 0)[0] == ((2, 2),)
    assert Sharding.from_placements(m, [Shard(0)], 1, order={0: runs}) \
        .order == {0: runs}


@pytest.mark.parametrize("runs,msg", [
    ([[0, 4], [3, 5]], r"t: dst: order of dim 0: run 1 \[3, 5\] overlaps "
                       r"run 0 \[0, 4\]"),
    ([[0, 4], [6, 2]], r"t: dst: order of dim 0: no run covers indices "
                       r"\[4, 6\) of dim 0; the runs must cover \[0, 8\)"),
    ([[0, 7]], r"no run covers indices \[7, 8\)"),
    ([[4, 4], [0, 5]], r"run 0 \[4, 4\] overlaps run 1 \[0, 5\]"),
    ([[0, 8], [8, 1]], r"run 1 \[8, 1\] is outside dim 0 of size 8"),
    ([[-1, 2], [1, 7]], r"run 0 \[-1, 2\] is outside"),
    ([], r"no run covers indices \[0, 8\) of dim 0"),
])
def test_storage_order_errors_name_tensor_side_dim_and_run(runs, msg):
    m = DeviceMesh([0, 1], ("x",))
    with pytest.raises(ReshardError, match=msg):
        Layout().add("t", [8], "bf16", Sharding(m, [["x"]]),
                     Sharding(m, [["x"]], order={0: runs}))


@pytest.mark.parametrize("order,msg", [
    ({0: 5}, r"order of dim 0: 5 must be a list of \[start, length\] runs"),
    ({0: [[0, 1, 2]]}, r"order of dim 0: run 0 \[0, 1, 2\] is not \[start, "
                       r"length\]"),
    ({0: [[0, 1.5]]}, "is not \\[start, length\\]"),
    ({1: [[0, 8]]}, "order: dim 1 out of range"),
])
def test_storage_order_form(order, msg):
    with pytest.raises(ReshardError, match=msg):
        Sharding(DeviceMesh([0, 1], ("x",)), [["x"]], order=order)


def test_an_empty_order_on_a_zero_size_dim(have_tools, tmp_path):
    # [] covers [0, 0) exactly: the logical order, in JSON and MLIR alike.
    m = DeviceMesh([0, 1], ("tp",), name="m")
    lay = Layout()
    lay.add("z", [0, 3], "bf16", Sharding(m, [["tp"], []], order={0: []}),
            Sharding(m, [[], ["tp"]], order={0: [], 1: [[2, 1], [0, 2]]}))
    assert lay.to_dict()["tensors"][0]["src"]["order"] == {"0": []}
    assert "<[[tp], []]> to @m <[[], [tp] order [[2, 1], [0, 2]]]>" \
        in lay.to_mlir()
    for name, text in (("z.json", json.dumps(lay.to_dict())),
                       ("z.mlir", lay.to_mlir())):
        (tmp_path / name).write_text(text)
        out = subprocess.run([tools.tool("reshard-run"), str(tmp_path / name),
                              "--check"], capture_output=True, text=True)
        assert out.returncode == 0 and "all correct" in out.stdout, out.stderr


def test_dim_order_stored_shape_json_and_mlir(have_tools, tmp_path):
    # gpt-oss's w13 as [gate/up, f, h]: vLLM's buffer [f/tp, 2, h] holds
    # the interleaved rows; Megatron's [2, f/tp, h] is [gate; up].
    m = DeviceMesh([0, 1, 2], ("tp",), name="m")
    src = Sharding(m, [[], ["tp"], []])
    dst = Sharding(m, [[], ["tp"], []], dim_order=[1, 0, 2])
    assert dst.local_shape([2, 6, 4], 1) == [2, 2, 4]
    assert dst.stored_shape([2, 9, 4], 0) == [3, 2, 4]
    assert src.stored_shape([2, 9, 4], 0) == [2, 3, 4]
    # The identity is no dim order: one layout, one spelling.
    assert Sharding(m, [[], ["tp"]], dim_order=(0, 1)).dim_order is None
    lay = Layout()
    lay.add("w13", [2, 6, 4], "int32", src, dst)
    lay.add("b13", [2, 6], "int32", Sharding(m, [[], ["tp"]]),
            Sharding(m, [[], ["tp"]], dim_order=[1, 0]))
    d = lay.to_dict()
    assert d["tensors"][0]["dst"] == {"mesh": "m", "dims": [[], ["tp"], []],
                                      "dim_order": [1, 0, 2]}
    assert "dim_order" not in d["tensors"][0]["src"]
    assert "<[[], [tp], []] dim_order [1, 0, 2]>" in lay.to_mlir()
    # The tools take both forms and check every element.
    lay.write_json(tmp_path / "l.json")
    (tmp_path / "l.mlir").write_text(lay.to_mlir())
    for f in ("l.json", "l.mlir"):
        out = subprocess.run([tools.tool("reshard-run"), str(tmp_path / f),
                              "--check", "--engine"], capture_output=True,
                             text=True)
        assert out.returncode == 0 and "all correct" in out.stdout, out


@pytest.mark.parametrize("perm,msg", [
    ([0, 0], r"dim_order: \[0, 0\] is not a permutation of the sharding's "
             r"2 dim\(s\)"),
    ([1], "is not a permutation"),
    ([0, 2], "is not a permutation"),
    ([0, 1.0], "is not a permutation"),
    ("10", "give a list of dims"),
])
def test_dim_order_must_be_a_permutation(perm, msg):
    with pytest.raises(ReshardError, match=msg):
        Sharding(DeviceMesh([0, 1], ("x",)), [["x"], []], dim_order=perm)


@pytest.mark.parametrize("perm", [None, [], [0], [1, 1], "01"])
def test_layout_json_dim_order_must_list_every_dim(perm):
    from reshard.layout_json import check_layout_json
    d = {"meshes": {"m": {"shape": [2], "axes": ["x"], "ranks": [0, 1]}},
         "tensors": [{"name": "t", "shape": [2, 4], "dtype": "bf16",
                      "src": {"mesh": "m", "dims": [["x"], []]},
                      "dst": {"mesh": "m", "dims": [[], []],
                              "dim_order": perm}}]}
    with pytest.raises(ReshardError, match="dim_order must list every dim "
                                           "0..1 once"):
        check_layout_json(d)
    d["tensors"][0]["dst"]["dim_order"] = [1, 0]
    check_layout_json(d)


def test_quantized_destination_has_no_dim_order():
    m = DeviceMesh([0, 1], ("x",))
    with pytest.raises(ReshardError, match="no dim_order"):
        Layout().add("t", [4, 8], "bf16", Sharding(m, [["x"], []]),
                     Sharding(m, [[], ["x"]], quant={"block": [1, 4]},
                              dim_order=[1, 0]))


def test_unnamed_mesh_does_not_take_an_explicit_name():
    # An unnamed mesh used to become mesh0 even when another was named
    # mesh0, and the layout was refused as two meshes of one name.
    lay = Layout()
    a = DeviceMesh([0, 1], ("x",))
    b = DeviceMesh([4, 5], ("x",), name="mesh0")
    lay.add("t", [4], "bf16", Sharding(a, [["x"]]), Sharding(b, [["x"]]))
    meshes = lay.to_dict()["meshes"]
    assert meshes["mesh0"]["ranks"] == [4, 5]
    assert meshes["mesh1"]["ranks"] == [0, 1]


def test_mlir_string_escapes(tmp_path):
    # JSON's \uXXXX escapes are not MLIR's: non-ASCII and control bytes go
    # as \XX hex bytes.
    m = DeviceMesh([0, 1], ("t p",), name="m")
    lay = Layout()
    lay.add('é\x01"\\.w', [4], "bf16", Sharding(m, [["t p"]]),
            Sharding(m, [[]]))
    text = lay.to_mlir()
    assert r'@"\C3\A9\01\22\5C.w"' in text and 'axes = ["t p"]' in text
    from reshard import tools
    try:
        tools.tool("reshard-opt")
    except ReshardError:
        return
    path = tmp_path / "l.mlir"
    path.write_text(text)
    tools.verify(str(path))


@pytest.mark.parametrize("topo,msg", [
    ([1], "give a preset name or a JSON object"),
    ({"gpus_per_node": 0, "nvl_domain_size": 8, "nic_GBps_per_gpu": 50,
      "nvlink_GBps_per_gpu": 450}, "gpus_per_node=0 is not a positive"),
    ({"gpus_per_node": 8, "nvl_domain_size": 8, "nic_GBps_per_gpu": "fast",
      "nvlink_GBps_per_gpu": 450}, "nic_GBps_per_gpu='fast' is not a number"),
    ({"gpus_per_node": 8, "nvl_domain_size": 8, "nic_GBps_per_gpu": 50,
      "nvlink_GBps_per_gpu": 450, "nic_latency_us": -1},
     "nic_latency_us=-1 is not a number >= 0"),
    # Positive and finite, but the compiler's modelled times would overflow.
    ({"gpus_per_node": 8, "nvl_domain_size": 8, "nic_GBps_per_gpu": 1e-318,
      "nvlink_GBps_per_gpu": 450},
     r"nic_GBps_per_gpu=1e-318 is outside \[1e-06, 1e\+09\] GB/s"),
    ({"gpus_per_node": 8, "nvl_domain_size": 8, "nic_GBps_per_gpu": 50,
      "nvlink_GBps_per_gpu": 450, "nvlink_latency_us": 1.7e308},
     r"nvlink_latency_us=1.7e\+308 is neither 0 nor in"),
])
def test_topology_values_are_checked(topo, msg):
    # These used to raise ZeroDivisionError / TypeError.
    from reshard.topology import get_topology
    with pytest.raises(ReshardError, match=msg):
        get_topology(topo)


# --- quantized destinations ---------------------------------------------------

def _quant_case(name, shape, dtype, src_dims, dst_dims, quant, layout=None,
                order=None, src_quant=None):
    m = init_device_mesh((2,), mesh_dim_names=("tp",))
    n = init_device_mesh((2,), mesh_dim_names=("tp",), first_rank=2)
    lay = layout or Layout()
    lay.add(name, shape, dtype, Sharding(m, src_dims, quant=src_quant),
            Sharding(n, dst_dims, order=order, quant=quant))
    return lay


@pytest.mark.parametrize("kw, msg", [
    (dict(shape=[300, 64], quant={"block": [128, 64]}),
     r"w: dim 0: shard boundary 150 \(rank 2's shard\) is not a multiple "
     r"of the block size 128 \(blocks \[128, 64\]\)"),
    (dict(shape=[256, 64], dtype="int8"),
     "an FP8 destination quantizes bf16, fp16 or fp32, not int8"),
    (dict(quant={"block": [128]}), "quant has 1 block sizes for 2 dims"),
    (dict(quant={"mx": 16}), "MXFP8 blocks are 32 elements, not 16"),
    (dict(quant={"block": [0, 64]}), r"block sizes are integers >= 1"),
    (dict(quant={"block": [128, 64], "mx": 32}), "give {'block'"),
    (dict(quant={"fmt": 1}), "give {'block'"),
    (dict(quant={"mx": 32, "scale_fmt": "ue8m0"}), "give {'block'"),
    (dict(quant={"scale_fmt": "ue8m0"}), "give {'block'"),
    (dict(quant={"block": [128, 64], "scale_fmt": "e8m0"}),
     "scale_fmt is 'ue8m0' or 'fp32', not 'e8m0'"),
    (dict(src_quant={"mx": 32}), "quant belongs to the destination"),
    (dict(order={0: [[128, 128], [0, 128]]}),
     "a quantized destination has no storage order"),
])
def test_quant_errors_at_add(kw, msg):
    """Layout.add refuses what docs/Layout.md's quantization rules refuse
    without planning, as reshard-compile would."""
    args = dict(name="w", shape=[256, 64], dtype="bf16",
                src_dims=[["tp"], []], dst_dims=[["tp"], []],
                quant={"block": [128, 64]})
    args.update(kw)
    with pytest.raises(ReshardError, match=msg):
        _quant_case(**args)


def test_quant_ue8m0_scale_format_reaches_json_and_text():
    """{"block": [...], "scale_fmt": "ue8m0"} is kept as given in the JSON
    and written as the dialect's `quant block [...] ue8m0`."""
    lay = _quant_case("w", [256, 64], "bf16", [["tp"], []], [["tp"], []],
                      {"block": [128, 64], "scale_fmt": "ue8m0"})
    t = lay.to_dict()["tensors"][0]
    assert t["dst"]["quant"] == {"block": [128, 64], "scale_fmt": "ue8m0"}
    assert "quant block [128, 64] ue8m0>" in lay.to_mlir()


def test_quant_alignment_answers_are_shared_by_equal_shardings():
    """Layout.add remembers each alignment answer by mesh, dims, blocks,
    shape and block sizes: a second tensor of the same sharding gets the
    same answer (its own name in the message), another mesh its own."""
    lay = _quant_case("a", [256, 64], "bf16", [["tp"], []], [["tp"], []],
                      {"block": [128, 64]})
    _quant_case("b", [256, 64], "bf16", [["tp"], []], [["tp"], []],
                {"block": [128, 64]}, layout=lay)
    for name in ("c", "d"):
        with pytest.raises(ReshardError, match=rf"{name}: dim 0: shard "
                                               rf"boundary 150 \(rank 2's"):
            _quant_case(name, [300, 64], "bf16", [["tp"], []], [["tp"], []],
                        {"block": [128, 64]}, layout=lay)
    m = init_device_mesh((2,), mesh_dim_names=("tp",))
    other = init_device_mesh((2,), mesh_dim_names=("tp",), first_rank=4)
    with pytest.raises(ReshardError, match=r"boundary 150 \(rank 4's"):
        lay.add("e", [300, 64], "bf16", Sharding(m, [["tp"], []]),
                Sharding(other, [["tp"], []], quant={"block": [128, 64]}))
    assert [t.name for t in lay.tensors] == ["a", "b"]


def test_quant_scale_names_are_taken():
    lay = _quant_case("w", [256, 64], "bf16", [["tp"], []], [["tp"], []],
                      {"block": [128, 64]})
    with pytest.raises(ReshardError, match="the scales of the quantized "
                                           "tensor 'w' have this name"):
        _quant_case("w.scale", [2, 1], "fp32", [["tp"], []], [["tp"], []],
                    None, layout=lay)
    _quant_case("v.scale", [2, 1], "fp32", [["tp"], []], [["tp"], []], None,
                layout=lay)
    with pytest.raises(ReshardError, match="its scales would be named "
                                           "'v.scale'"):
        _quant_case("v", [256, 64], "bf16", [["tp"], []], [["tp"], []],
                    {"mx": 32}, layout=lay)
    # A boundary only at the dim's end may cut a block (MX: 63 = 32 | 31).
    _quant_case("u", [256, 63], "bf16", [[], ["tp"]], [[], ["tp"]],
                {"mx": 32}, layout=lay)
