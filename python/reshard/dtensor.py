"""Conversion from torch.distributed.tensor (DTensor) meshes and placements.

Duck-typed: nothing here imports torch, so the logic works on any object
that looks like a DeviceMesh (`.mesh` with `.tolist()`, optional
`.mesh_dim_names`), a placement (`is_shard()`/`is_replicate()`/`.dim`) or a
DTensor (`.device_mesh`, `.placements`, `.shape`, `.dtype`).
"""
from __future__ import annotations

from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple

from .dtypes import TORCH_DTYPES, dtype_name  # noqa: F401 (re-exported)
from .errors import ReshardError
from .layout import (DeviceMesh, Layout, Placement, Redistribution,
                     Replicate, Shard, Sharding)

Blocks = Optional[Mapping[int, Sequence[int]]]


def mesh_from_torch(device_mesh: Any, name: Optional[str] = None
                    ) -> DeviceMesh:
    """A torch DeviceMesh (or look-alike) -> DeviceMesh with its ranks: its
    .mesh tensor and .mesh_dim_names go to DeviceMesh as they are (names
    dim0, dim1, ... when it has none)."""
    m = getattr(device_mesh, "mesh", None)
    if m is None or not hasattr(m, "tolist"):
        raise ReshardError(f"{type(device_mesh).__name__} is not a "
                           f"DeviceMesh: it has no .mesh tensor of ranks")
    return DeviceMesh(m, getattr(device_mesh, "mesh_dim_names", None),
                      name=name)


def placement_from_torch(p: Any) -> Placement:
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


def sharding_from_torch(device_mesh: Any, placements: Iterable[Any],
                        ndim: int, blocks: Blocks = None,
                        mesh: Optional[DeviceMesh] = None) -> Sharding:
    """A torch mesh and placements -> Sharding (mesh: reuse a converted
    DeviceMesh, so that tensors share mesh symbols)."""
    mesh = mesh or mesh_from_torch(device_mesh)
    return Sharding.from_placements(
        mesh, [placement_from_torch(p) for p in placements], ndim, blocks)


def from_dtensor(dt: Any, blocks: Blocks = None,
                 mesh: Optional[DeviceMesh] = None
                 ) -> Tuple[Sharding, List[int], str]:
    """A DTensor -> (Sharding, global shape, dtype name)."""
    for attr in ("device_mesh", "placements", "shape", "dtype"):
        if not hasattr(dt, attr):
            raise ReshardError(f"{type(dt).__name__} is not a DTensor: no "
                               f".{attr}")
    shape = [int(n) for n in dt.shape]
    return (sharding_from_torch(dt.device_mesh, dt.placements, len(shape),
                                blocks, mesh), shape, dtype_name(dt.dtype))


def add_dtensors(layout: Layout, name: str, src: Any, dst: Any,
                 blocks: Blocks = None, src_mesh: Optional[DeviceMesh] = None,
                 dst_mesh: Optional[DeviceMesh] = None) -> Redistribution:
    """Adds one redistribution from DTensor src to DTensor dst (same global
    shape and dtype; they need no data, a meta-device DTensor will do)."""
    s, shape, dtype = from_dtensor(src, blocks, src_mesh)
    d, dshape, ddtype = from_dtensor(dst, blocks, dst_mesh)
    if shape != dshape or dtype != ddtype:
        raise ReshardError(f"{name}: source {shape} {dtype} and destination "
                           f"{dshape} {ddtype} differ")
    return layout.add(name, shape, dtype, s, d)
