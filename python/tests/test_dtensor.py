"""DTensor interop: the duck-typed conversion on stand-in objects (always),
and on real torch.distributed.tensor objects when torch is installed."""
import pytest

from reshard import DeviceMesh, Layout, Replicate, Shard
from reshard.dtensor import (add_dtensors, dtype_name, from_dtensor,
                             mesh_from_torch, placement_from_torch)
from reshard.errors import ReshardError


class FakeTensor:            # what DeviceMesh.mesh offers: .tolist()
    def __init__(self, data):
        self.data = data

    def tolist(self):
        return self.data


class FakeMesh:
    def __init__(self, ranks, names=None):
        self.mesh = FakeTensor(ranks)
        self.mesh_dim_names = names


class FakePlacement:
    def __init__(self, kind, dim=None):
        self.kind, self.dim = kind, dim

    def is_shard(self):
        return self.kind == "shard"

    def is_replicate(self):
        return self.kind == "replicate"

    def is_partial(self):
        return self.kind == "partial"


class _StridedShard(FakePlacement):
    pass


class FakeDTensor:
    def __init__(self, mesh, placements, shape, dtype="torch.bfloat16"):
        self.device_mesh, self.placements = mesh, placements
        self.shape, self.dtype = shape, dtype


def test_mesh_from_duck_typed_device_mesh():
    m = mesh_from_torch(FakeMesh([[4, 5, 6, 7], [0, 1, 2, 3]], ("dp", "tp")))
    assert m.shape == [2, 4] and m.axis_names == ["dp", "tp"]
    assert m.ranks == [4, 5, 6, 7, 0, 1, 2, 3]
    assert m.mesh == [[4, 5, 6, 7], [0, 1, 2, 3]]
    assert m.mesh_dim_names == ("dp", "tp")
    assert mesh_from_torch(FakeMesh([0, 1])).axis_names == ["dim0"]
    assert mesh_from_torch(FakeMesh(3)).shape == []          # 0-D
    with pytest.raises(ReshardError, match="not rectangular"):
        mesh_from_torch(FakeMesh([[0, 1], [2]]))
    with pytest.raises(ReshardError, match="not a DeviceMesh"):
        mesh_from_torch(object())


def test_placements():
    assert placement_from_torch(FakePlacement("shard", 1)) == Shard(1)
    assert placement_from_torch(FakePlacement("replicate")) == Replicate()
    with pytest.raises(ReshardError, match="Partial"):
        placement_from_torch(FakePlacement("partial"))
    with pytest.raises(ReshardError, match="_StridedShard"):
        placement_from_torch(_StridedShard("shard", 0))


def test_dtensor_pair_to_layout():
    train = FakeMesh([[0, 1], [2, 3]], ("dp", "tp"))
    infer = FakeMesh([4, 5, 6, 7], ("tp",))
    src = FakeDTensor(train, [Replicate(), FakePlacement("shard", 0)],
                      (48, 32))
    dst = FakeDTensor(infer, [FakePlacement("shard", 0)], (48, 32))
    lay = Layout()
    t = add_dtensors(lay, "qkv", src, dst, blocks={0: [32, 8, 8]})
    assert t.src.dims == [["tp"], []] and t.dst.dims == [["tp"], []]
    assert t.src.local_shape(t.shape, 3) == [24, 32]
    assert t.dst.local_shape(t.shape, 4) == [8 + 2 + 2, 32]
    assert t.dtype == "bf16"
    assert list(lay.to_dict()["meshes"]) == ["mesh0", "mesh1"]
    # Two mesh dims on one tensor dim nest in mesh-dim order.
    s, shape, _ = from_dtensor(FakeDTensor(
        train, [FakePlacement("shard", 0), FakePlacement("shard", 0)], (8,)))
    assert s.dims == [["dp", "tp"]]
    with pytest.raises(ReshardError, match="differ"):
        add_dtensors(lay, "x", src, FakeDTensor(infer, [Replicate()], (4,)))


def test_dtype_names():
    assert dtype_name("torch.float32") == "fp32"
    assert dtype_name("torch.float8_e4m3fn") == "fp8e4m3"
    with pytest.raises(ReshardError, match="no reshard equivalent"):
        dtype_name("torch.complex64")
    # More forms (torch dtype objects, numpy): test_mesh.py.


def test_real_dtensor():
    torch = pytest.importorskip("torch")
    dist = pytest.importorskip("torch.distributed")
    try:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import DTensor
        from torch.distributed.tensor import Replicate as TR
        from torch.distributed.tensor import Shard as TS
        from torch.testing._internal.distributed.fake_pg import FakeStore
        if not dist.is_initialized():
            dist.init_process_group("fake", store=FakeStore(), rank=0,
                                    world_size=8)
        mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
        dt = DTensor.from_local(torch.empty(12, 32, dtype=torch.bfloat16),
                                mesh, [TR(), TS(0)], run_check=False,
                                shape=torch.Size([48, 32]),
                                stride=(32, 1))
    except Exception as e:  # no fake process group in this torch build
        pytest.skip(f"cannot build a DTensor here: {e}")
    s, shape, dtype = from_dtensor(dt, blocks={0: [32, 8, 8]})
    assert shape == [48, 32] and dtype == "bf16"
    assert s.mesh.shape == [2, 4] and s.mesh.axis_names == ["dp", "tp"]
    # torch's DeviceMesh.mesh goes to reshard's DeviceMesh as it is.
    assert s.mesh.mesh == mesh.mesh.tolist()
    assert s.mesh.mesh_dim_names == mesh.mesh_dim_names
    assert DeviceMesh(mesh.mesh, mesh.mesh_dim_names).same_as(s.mesh)
    assert s.dims == [["tp"], []]
    assert s.local_shape(shape, 0) == [12, 32]
