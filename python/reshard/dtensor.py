"""Conversion from torch.distributed.tensor (DTensor) meshes and placements.

Duck-typed: nothing here imports torch, so the logic works on any object
that looks like a DeviceMesh (`.mesh` with `.tolist()`, optional
`.mesh_dim_names`), a placement (`is_shard()`/`is_replicate()`/`.dim`) or a
DTensor (`.device_mesh`, `.placements`, `.shape`, `.dtype`).
"""
from .errors import ReshardError
from .layout import DeviceMesh, Replicate, Shard, Sharding

# torch dtype (str(torch.bfloat16) == "torch.bfloat16") -> JSON dtype.
TORCH_DTYPES = {
    "bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32",
    "float": "fp32", "float64": "fp64", "double": "fp64", "int8": "int8",
    "uint8": "uint8", "int16": "int16", "uint16": "uint16", "int32": "int32",
    "uint32": "uint32", "int64": "int64", "uint64": "uint64",
    "float8_e4m3fn": "fp8e4m3", "float8_e5m2": "fp8e5m2",
}


def dtype_name(dtype):
    """A torch dtype (or its name) -> the interchange format's dtype."""
    s = str(dtype).removeprefix("torch.")
    if s in TORCH_DTYPES:
        return TORCH_DTYPES[s]
    if s in TORCH_DTYPES.values():
        return s
    raise ReshardError(f"dtype {dtype} has no reshard equivalent")


def _flatten(x):
    if isinstance(x, (list, tuple)):
        shape, flat = [len(x)], []
        inner = None
        for e in x:
            s, f = _flatten(e)
            if inner is not None and s != inner:
                raise ReshardError("device mesh is not rectangular")
            inner = s
            flat += f
        return shape + (inner or []), flat
    return [], [int(x)]


def mesh_from_torch(device_mesh, name=None):
    """A torch DeviceMesh (or look-alike) -> DeviceMesh with its ranks."""
    m = getattr(device_mesh, "mesh", None)
    if m is None or not hasattr(m, "tolist"):
        raise ReshardError(f"{type(device_mesh).__name__} is not a "
                           f"DeviceMesh: it has no .mesh tensor of ranks")
    shape, ranks = _flatten(m.tolist())
    names = getattr(device_mesh, "mesh_dim_names", None)
    if names is None:
        names = [f"dim{i}" for i in range(len(shape))]
    return DeviceMesh(shape, names, ranks, name=name)


def placement_from_torch(p):
    """Shard / Replicate from a DTensor placement; others are refused."""
    kind = type(p).__name__
    if kind == "_StridedShard":
        raise ReshardError("_StridedShard (FSDP2 + TP interleaving) is not "
                           "supported: give the layout with blocks instead")
    if isinstance(p, (Shard, Replicate)):
        return p
    if getattr(p, "is_partial", lambda: False)() or kind == "Partial":
        raise ReshardError("Partial placement holds pending reductions, not "
                           "a layout of the weights; redistribute to "
                           "Replicate or Shard first")
    if getattr(p, "is_shard", lambda: False)():
        return Shard(int(p.dim))
    if getattr(p, "is_replicate", lambda: False)():
        return Replicate()
    raise ReshardError(f"unknown placement {p!r}")


def sharding_from_torch(device_mesh, placements, ndim, blocks=None,
                        mesh=None):
    """A torch mesh and placements -> Sharding (mesh: reuse a converted
    DeviceMesh, so that tensors share mesh symbols)."""
    mesh = mesh or mesh_from_torch(device_mesh)
    return Sharding.from_placements(
        mesh, [placement_from_torch(p) for p in placements], ndim, blocks)


def from_dtensor(dt, blocks=None, mesh=None):
    """A DTensor -> (Sharding, global shape, dtype name)."""
    for attr in ("device_mesh", "placements", "shape", "dtype"):
        if not hasattr(dt, attr):
            raise ReshardError(f"{type(dt).__name__} is not a DTensor: no "
                               f".{attr}")
    shape = [int(n) for n in dt.shape]
    return (sharding_from_torch(dt.device_mesh, dt.placements, len(shape),
                                blocks, mesh), shape, dtype_name(dt.dtype))


def add_dtensors(layout, name, src, dst, blocks=None, src_mesh=None,
                 dst_mesh=None):
    """Adds one redistribution from DTensor src to DTensor dst (same global
    shape and dtype; they need no data, a meta-device DTensor will do)."""
    s, shape, dtype = from_dtensor(src, blocks, src_mesh)
    d, dshape, ddtype = from_dtensor(dst, blocks, dst_mesh)
    if shape != dshape or dtype != ddtype:
        raise ReshardError(f"{name}: source {shape} {dtype} and destination "
                           f"{dshape} {ddtype} differ")
    return layout.add(name, shape, dtype, s, d)
