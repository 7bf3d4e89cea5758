"""The DTensor-style public names: DeviceMesh(mesh, mesh_dim_names=),
init_device_mesh, torch / numpy dtypes, Redistribution, and the deprecated
spellings they replace."""
import io
import json
import warnings

import pytest

import reshard
from reshard import (DeviceMesh, Layout, Redistribution, Replicate, Shard,
                     Sharding, dtype_name, init_device_mesh)
from reshard.dtensor import from_dtensor, mesh_from_torch
from reshard.errors import ReshardError
from reshard.models import Param


class FakeTensor:            # a torch tensor / numpy array: .tolist()
    def __init__(self, data):
        self.data = data

    def tolist(self):
        return self.data


# -- DeviceMesh(mesh, mesh_dim_names=) ------------------------------------

def test_nested_list_2d():
    m = DeviceMesh([[4, 5, 6, 7], [0, 1, 2, 3]], mesh_dim_names=("dp", "tp"),
                   name="train")
    assert m.shape == [2, 4] and m.ndim == 2
    assert m.mesh_dim_names == ("dp", "tp") and m.axis_names == ["dp", "tp"]
    assert m.ranks == [4, 5, 6, 7, 0, 1, 2, 3]
    assert m.mesh == [[4, 5, 6, 7], [0, 1, 2, 3]]
    assert m.size() == 8 and m.size(0) == 2 and m.size(-1) == 4
    assert m.size("tp") == 4
    assert m.coords(6) == (0, 2) and m.coords(1) == (1, 1)
    assert m.coords(8) is None
    assert m.to_json() == {"shape": [2, 4], "axes": ["dp", "tp"],
                           "ranks": [4, 5, 6, 7, 0, 1, 2, 3]}
    assert m.name == "train"
    with pytest.raises(ReshardError, match="out of range"):
        m.size(2)
    with pytest.raises(ReshardError, match="no mesh dim 'pp'"):
        m.size("pp")


def test_other_depths_and_containers():
    m = DeviceMesh([8, 9], ("tp",))
    assert m.shape == [2] and m.ranks == [8, 9] and m.mesh == [8, 9]
    m = DeviceMesh(range(3, 7), ["x"])
    assert m.shape == [4] and m.ranks == [3, 4, 5, 6]
    m = DeviceMesh(((0, 1), (2, 3)), ["a", "b"])
    assert m.mesh == [[0, 1], [2, 3]]
    m = DeviceMesh([[[0, 1, 2]], [[3, 4, 5]]], ("a", "b", "c"))
    assert m.shape == [2, 1, 3] and m.coords(4) == (1, 0, 1)
    # 0-D: one rank, no dims (vLLM's per-expert meshes).
    m = DeviceMesh(5, ())
    assert m.shape == [] and m.ranks == [5] and m.ndim == 0 and m.mesh == 5
    assert m.coords(5) == () and m.size() == 1
    assert DeviceMesh(5).mesh_dim_names == ()


def test_tolist_objects():
    # torch's DeviceMesh.mesh is a tensor: anything with .tolist() will do.
    m = DeviceMesh(FakeTensor([[0, 2], [1, 3]]), ("dp", "tp"))
    assert m.shape == [2, 2] and m.ranks == [0, 2, 1, 3]
    assert DeviceMesh(FakeTensor(7), ()).ranks == [7]
    # ... also inside a list (rows as tensors)
    m = DeviceMesh([FakeTensor([0, 1]), FakeTensor([2, 3])], ("a", "b"))
    assert m.shape == [2, 2]


def test_numpy_arrays():
    np = pytest.importorskip("numpy")
    m = DeviceMesh(np.arange(8).reshape(2, 4), ("dp", "tp"))
    assert m.shape == [2, 4] and m.ranks == list(range(8))
    assert all(type(r) is int for r in m.ranks)
    m = DeviceMesh([np.int64(3), np.int32(1)], ("x",))
    assert m.ranks == [3, 1] and all(type(r) is int for r in m.ranks)
    assert json.dumps(m.to_json()) == \
        '{"shape": [2], "axes": ["x"], "ranks": [3, 1]}'


def test_default_names():
    assert DeviceMesh([[0, 1], [2, 3]]).mesh_dim_names == ("dim0", "dim1")


@pytest.mark.parametrize("mesh,names,msg", [
    # ragged
    ([[0, 1], [2]], ("a", "b"),
     r"mesh\[1\] has 1 entries where mesh\[0\] has 2 \(the mesh is not "
     r"rectangular\)"),
    ([[0, 1], 2], ("a", "b"),
     r"mesh\[1\] is 2 where a list of 2 is expected \(the mesh is not "
     r"rectangular\)"),
    ([0, [1, 2]], ("a",), r"mesh\[1\] is a list where a rank is expected"),
    ([[[0], [1]], [[2], [3, 4]]], ("a", "b", "c"),
     r"mesh\[1\]\[1\] has 2 entries where mesh\[0\]\[0\] has 1"),
    # ranks
    ([[0, 1], [1, 2]], ("a", "b"),
     r"rank 1 appears twice \(mesh\[0\]\[1\] and mesh\[1\]\[0\]\); ranks "
     r"must be distinct"),
    ([0, -1], ("a",), r"mesh\[1\] = -1: ranks must be >= 0"),
    ([True, False], ("a",), r"mesh\[0\] = True is not an integer rank"),
    ([0, 1.0], ("a",), r"mesh\[1\] = 1.0 is not an integer rank"),
    ([["0", "1"]], ("a", "b"), r"mesh\[0\]\[0\] = '0' is not an integer"),
    (None, (), "None is not an integer rank"),
    ([], ("a",), r"shape \[0\]: every mesh dim needs at least one rank"),
    ([[], []], ("a", "b"), r"shape \[2, 0\]: every mesh dim needs"),
    ("cuda", ("a",), "takes no device type"),
    # names
    ([[0, 1], [2, 3]], ("dp",),
     r"a 2-D mesh \(shape \[2, 2\]\) but 1 mesh_dim_names \['dp'\]"),
    ([0, 4], ("dp", "tp"),
     r"a 1-D mesh \(shape \[2\]\) but 2 mesh_dim_names \['dp', 'tp'\]$"),
    ([0, 1], ("dp", "tp"), r"2 mesh_dim_names \['dp', 'tp'\]$"),
    ([[0, 1], [2, 3]], ("tp", "tp"), "duplicate mesh_dim_names 'tp'"),
    ([0, 1], ("",), r"mesh_dim_names\[0\] = '' is not a non-empty string"),
    ([0, 1], (0,), r"mesh_dim_names\[0\] = 0 is not a non-empty string"),
    ([0, 1], "tp", r"mesh_dim_names 'tp' is a string; .* \('tp',\)"),
    ([0, 1], 3, "mesh_dim_names must be a sequence of strings, not int"),
])
def test_mesh_errors(mesh, names, msg):
    with pytest.raises(ReshardError, match=msg):
        DeviceMesh(mesh, names)


def test_mesh_error_names_the_mesh():
    with pytest.raises(ReshardError, match="^mesh 'train': rank 0 appears"):
        DeviceMesh([0, 0], ("x",), name="train")
    with pytest.raises(ReshardError, match="mesh name 3 must be"):
        DeviceMesh([0], ("x",), name=3)


def test_a_torch_device_mesh_is_pointed_to_mesh_from_torch():
    class TorchMesh:
        mesh = FakeTensor([0, 1])
        mesh_dim_names = ("tp",)
    with pytest.raises(ReshardError, match="mesh_from_torch"):
        DeviceMesh(TorchMesh(), ("tp",))
    assert mesh_from_torch(TorchMesh()).same_as(DeviceMesh([0, 1], ("tp",)))


def test_repr_round_trips():
    m = DeviceMesh([[0, 1], [2, 3]], ("dp", "tp"), name="m")
    assert repr(m) == ("DeviceMesh([[0, 1], [2, 3]], mesh_dim_names=('dp', "
                       "'tp'), name='m')")
    assert eval(repr(m)).same_as(m)


# -- init_device_mesh ------------------------------------------------------

def test_init_device_mesh():
    m = init_device_mesh((2, 4), mesh_dim_names=("dp", "tp"))
    assert m.mesh == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert m.mesh_dim_names == ("dp", "tp") and m.name is None
    m = init_device_mesh([2, 2, 3], ("a", "b", "c"), first_rank=64,
                         name="infer")
    assert m.ranks == list(range(64, 76)) and m.name == "infer"
    assert m.coords(64 + 7) == (1, 0, 1)
    assert init_device_mesh((4,), ("x",), 8).ranks == [8, 9, 10, 11]
    assert init_device_mesh((3,)).mesh_dim_names == ("dim0",)
    m = init_device_mesh((), (), first_rank=9)
    assert m.shape == [] and m.ranks == [9]
    assert init_device_mesh((2, 4), ("dp", "tp")).same_as(
        DeviceMesh([[0, 1, 2, 3], [4, 5, 6, 7]], ("dp", "tp")))


@pytest.mark.parametrize("args,kw,msg", [
    (("cuda", (2, 4)), {}, "takes no device type"),
    (((2, 0),), {}, r"mesh_shape \[2, 0\]: sizes must be positive integers"),
    (((2, True),), {}, "sizes must be positive integers"),
    ((8,), {}, "mesh_shape 8 must be a tuple of sizes"),
    (((2,), ("x",), -1), {}, "first_rank -1 must be an integer >= 0"),
    (((2,), ("x",), True), {}, "first_rank True must be"),
    (((2, 2), ("x",)), {}, "2-D mesh"),
    (((2, 2), ("x", "x")), {"name": "m"}, "^mesh 'm': duplicate"),
])
def test_init_device_mesh_errors(args, kw, msg):
    with pytest.raises(ReshardError, match=msg):
        init_device_mesh(*args, **kw)


# -- dtypes ----------------------------------------------------------------

def _torch_dtype(name):
    """A stand-in of torch.<name>: an instance of a class `dtype` of module
    `torch` whose str() is "torch.<name>", as torch's dtypes are."""
    cls = type("dtype", (), {"__module__": "torch",
                             "__str__": lambda self: f"torch.{name}",
                             "__repr__": lambda self: f"torch.{name}"})
    return cls()


TORCH = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32",
         "float64": "fp64", "int8": "int8", "uint8": "uint8",
         "int16": "int16", "int32": "int32", "int64": "int64",
         "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
         "float8_e4m3fn": "fp8e4m3", "float8_e5m2": "fp8e5m2"}


@pytest.mark.parametrize("torch_name,json_name", sorted(TORCH.items()))
def test_torch_dtype_stand_ins(torch_name, json_name):
    assert dtype_name(_torch_dtype(torch_name)) == json_name
    assert dtype_name("torch." + torch_name) == json_name
    assert dtype_name(torch_name) == json_name       # numpy's spelling
    assert dtype_name(json_name) == json_name


def test_torch_aliases_need_the_prefix():
    assert dtype_name("torch.half") == "fp16"
    assert dtype_name("torch.float") == "fp32"
    assert dtype_name("torch.long") == "int64"
    for bare in ("float", "int", "long", "half"):   # numpy reads them apart
        with pytest.raises(ReshardError, match="unknown dtype"):
            dtype_name(bare)


def test_real_torch_dtypes_and_tensors():
    torch = pytest.importorskip("torch")
    for name, json_name in TORCH.items():
        if hasattr(torch, name):         # uint16..64 since torch 2.3
            assert dtype_name(getattr(torch, name)) == json_name
    assert dtype_name(torch.half) == "fp16"
    for bad in (torch.complex64, torch.bool):
        with pytest.raises(ReshardError, match=str(bad)):
            dtype_name(bad)
    m = DeviceMesh(torch.arange(4, 12).reshape(2, 4), ("dp", "tp"))
    assert m.mesh == [[4, 5, 6, 7], [8, 9, 10, 11]]
    assert all(type(r) is int for r in m.ranks)
    assert DeviceMesh(torch.tensor(3), ()).ranks == [3]
    lay = Layout()
    t = lay.add("w", [4], torch.bfloat16, Sharding(m, [["tp"]]),
                Sharding(m, [[]]))
    assert t.dtype == "bf16"


def test_numpy_dtypes():
    np = pytest.importorskip("numpy")
    assert dtype_name(np.float32) == "fp32"
    assert dtype_name(np.dtype("float16")) == "fp16"
    assert dtype_name(np.dtype(">i8")) == "int64"
    assert dtype_name(np.uint16) == "uint16"
    with pytest.raises(ReshardError, match="unknown dtype"):
        dtype_name(np.complex64)
    with pytest.raises(ReshardError, match="unknown dtype"):
        dtype_name(np.bool_)


@pytest.mark.parametrize("bad", ["f32", "bool", "torch.bool", "torch.f32",
                                 float, int, None, 4, _torch_dtype("bool"),
                                 _torch_dtype("complex64")])
def test_unknown_dtypes_name_the_accepted_ones(bad):
    with pytest.raises(ReshardError, match=r"unknown dtype .*: it has no "
                       r"reshard equivalent; give one of bf16 fp16 .* "
                       r"fp8e5m2, or the torch or numpy dtype "
                       r"\(torch.bfloat16, .*torch.float8_e5m2\)"):
        dtype_name(bad)


def test_dtypes_everywhere():
    m = DeviceMesh([0, 1], ("tp",))
    lay = Layout()
    t = lay.add("w", [4, 2], _torch_dtype("bfloat16"),
                Sharding(m, [["tp"], []]), Sharding(m, [[], []]))
    assert t.dtype == "bf16" and t.nbytes() == 16
    t = lay.add("b", [4], "torch.float32", Sharding(m, [[]]),
                Sharding(m, [[]]))
    assert t.dtype == "fp32"
    assert [d["dtype"] for d in lay.to_dict()["tensors"]] == ["bf16", "fp32"]
    r = Redistribution("x", [2], _torch_dtype("float8_e4m3fn"),
                       Sharding(m, [[]]), Sharding(m, [[]]))
    assert r.dtype == "fp8e4m3" and r.nbytes() == 2
    with pytest.raises(ReshardError, match="^v: unknown dtype 'f32'"):
        lay.add("v", [4], "f32", Sharding(m, [[]]), Sharding(m, [[]]))
    assert Param("p", [3], "rep", 0, dtype=_torch_dtype("int8")).dtype == \
        "int8"
    from reshard.models import get_model, model_params
    from dataclasses import replace
    mod = replace(get_model("llama-3.1-70b"), dtype=_torch_dtype("float16"))
    assert mod.dtype == "fp16"
    assert {p.dtype for p in model_params(mod, 1)} == {"fp16"}


def test_dtensor_dtype_objects():
    class Mesh:
        mesh = FakeTensor([[0, 1], [2, 3]])
        mesh_dim_names = ("dp", "tp")

    class Place:
        def is_shard(self):
            return False

        def is_replicate(self):
            return True

    class DT:
        device_mesh, placements, shape = Mesh(), [Place(), Place()], (4, 4)
        dtype = _torch_dtype("float16")
    s, shape, dtype = from_dtensor(DT())
    assert dtype == "fp16" and shape == [4, 4]
    assert s.mesh.mesh == [[0, 1], [2, 3]]
    assert s.mesh.mesh_dim_names == ("dp", "tp")


# -- the old spellings -----------------------------------------------------

def test_old_device_mesh_spelling_warns_and_works():
    new = DeviceMesh([[10, 11, 12], [13, 14, 15]], ("dp", "tp"), name="m")
    for make in (lambda: DeviceMesh([2, 3], ["dp", "tp"], range(10, 16),
                                    name="m"),
                 lambda: DeviceMesh([2, 3], ["dp", "tp"],
                                    ranks=range(10, 16), name="m"),
                 lambda: DeviceMesh([2, 3], ["dp", "tp"], range(10, 16),
                                    "m"),
                 lambda: DeviceMesh(shape=[2, 3], axis_names=["dp", "tp"],
                                    ranks=list(range(10, 16)), name="m")):
        with pytest.warns(DeprecationWarning, match="DeviceMesh\\(shape, "
                          "axis_names, ranks, name=\\) is deprecated"):
            m = make()
        assert m.same_as(new) and m.name == "m"
    with pytest.warns(DeprecationWarning):
        m = DeviceMesh(shape=[2, 4], axis_names=["dp", "tp"])
    assert m.same_as(init_device_mesh((2, 4), ("dp", "tp")))
    with pytest.warns(DeprecationWarning):
        m = DeviceMesh([], [], [7])                  # the old 0-D spelling
    assert m.same_as(DeviceMesh(7, ()))


def test_old_device_mesh_spelling_errors():
    warnings.simplefilter("ignore", DeprecationWarning)   # pytest restores
    with pytest.raises(ReshardError, match="has 2 devices but 1 ranks"):
        DeviceMesh([2], ["a"], [0])
    with pytest.raises(ReshardError, match="rank 1 appears twice"):
        DeviceMesh([2], ["a"], [1, 1])
    with pytest.raises(ReshardError, match="sizes must be positive"):
        DeviceMesh([0], ["a"], [])
    with pytest.raises(TypeError, match="unexpected keyword argument 'rank'"):
        DeviceMesh([2], ["a"], rank=[0, 1])
    with pytest.raises(TypeError, match="multiple values for 'ranks'"):
        DeviceMesh([2], ["a"], [0, 1], ranks=[0, 1])
    with pytest.raises(TypeError, match="missing its mesh"):
        DeviceMesh()


def test_old_spelling_without_ranks():
    # DeviceMesh([2, 4], ["dp", "tp"]) as ranks would be a 1-D mesh with
    # two names: it can only be the old (shape, axis_names), and warns.
    with pytest.warns(DeprecationWarning):
        m = DeviceMesh([2, 4], ["dp", "tp"])
    assert m.shape == [2, 4] and m.mesh_dim_names == ("dp", "tp")
    assert m.mesh == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # One size and one name is read the new way: the mesh of rank 4.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert DeviceMesh([4], ["tp"]).mesh == [4]
    # A 0 cannot be a size: the new reading, and its error.
    with pytest.raises(ReshardError, match=r"1-D mesh \(shape \[2\]\)"):
        DeviceMesh([0, 4], ["dp", "tp"])


def test_new_spelling_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DeviceMesh([[0, 1]], ("a", "b"), name="m")
        DeviceMesh([[0, 1]], mesh_dim_names=("a", "b"))
        init_device_mesh((2,), ("x",), first_rank=3, name="n")
        Redistribution  # noqa: B018


def test_tensor_alias():
    with pytest.warns(DeprecationWarning, match="reshard.Tensor is "
                      "deprecated: it is called reshard.Redistribution"):
        assert reshard.Tensor is Redistribution
    with pytest.warns(DeprecationWarning):
        from reshard import Tensor
    assert Tensor is Redistribution
    with pytest.warns(DeprecationWarning):
        from reshard.layout import Tensor as T2
    assert T2 is Redistribution
    assert "Tensor" not in reshard.__all__
    assert "Redistribution" in reshard.__all__
    assert "init_device_mesh" in reshard.__all__
    with pytest.raises(AttributeError):
        reshard.NoSuchName  # noqa: B018


def test_star_import_has_no_deprecated_names():
    ns = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec("from reshard import *", ns)
    assert "Tensor" not in ns and "DeviceMesh" in ns


def test_old_and_new_layouts_write_the_same_json():
    def build(train, infer):
        lay = Layout(topology="dgx-h100")
        lay.add("w", [48, 32], "bf16",
                Sharding.from_placements(train, [Replicate(), Shard(0)], 2,
                                         {0: [32, 8, 8]}),
                Sharding.from_placements(infer, [Shard(0)], 2,
                                         {0: [32, 8, 8]}))
        f = io.StringIO()
        lay.write_json(f)
        return f.getvalue()
    with pytest.warns(DeprecationWarning):
        old = build(DeviceMesh([2, 4], ["dp", "tp"], range(8), name="train"),
                    DeviceMesh([2], ["tp"], [8, 9]))
    new = build(init_device_mesh((2, 4), ("dp", "tp"), name="train"),
                DeviceMesh([8, 9], ("tp",)))
    assert old == new
